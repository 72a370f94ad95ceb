// Checkpoint: tensor offsets, the shared models, and refusal of bad files.
#include <catch2/catch.hpp>

#include "llama/error.hpp"
#include "llama/formats/llama2c_checkpoint.hpp"
#include "test_support.hpp"

using Catch::Matchers::Contains;
using llama::Checkpoint;
using llama::test::checkpoint_floats;
using llama::test::make_checkpoint_bytes;
using llama::test::temp_path;
using llama::test::write_file;

TEST_CASE("checkpoint computes every tensor offset of the legacy layout", "[checkpoint]") {
  // dim 8, hidden 12, 2 layers, 2 heads, 1 kv head, vocab 10 (separate classifier), seq 4.
  const std::vector<int32_t> h = {8, 12, 2, 2, 1, -10, 4};
  const std::string path = temp_path("offsets.bin");
  write_file(path, make_checkpoint_bytes(h, checkpoint_floats(h)));
  const Checkpoint ck = Checkpoint::open(path);
  const auto& t = ck.tensors();
  REQUIRE(t.size() == 12);
  // kv_dim = 4; offsets in bytes from the 28-byte header.
  const std::vector<std::pair<std::string, int64_t>> expected = {
      {"token_embedding", 28},
      {"rms_att", 28 + 4 * 80},
      {"wq", 28 + 4 * 96},
      {"wk", 28 + 4 * 224},
      {"wv", 28 + 4 * 288},
      {"wo", 28 + 4 * 352},
      {"rms_ffn", 28 + 4 * 480},
      {"w1", 28 + 4 * 496},
      {"w2", 28 + 4 * 688},
      {"w3", 28 + 4 * 880},
      {"rms_final", 28 + 4 * 1072},
      // rms_final (8) then two rope tables of seq*head_size/2 = 8 floats each.
      {"wcls", 28 + 4 * (1080 + 16)},
  };
  for (size_t i = 0; i < expected.size(); ++i) {
    CHECK(t[i].name == expected[i].first);
    CHECK(t[i].offset == expected[i].second);
  }
  CHECK(ck.config().vocab_size == 10);
  CHECK_FALSE(ck.config().shared_classifier);
  const auto& w = ck.model().weights;
  CHECK(w.classifier.f32().data() == t[11].data.data());
  CHECK(w.classifier.elements() == 80);
  CHECK(w.layers[1].wk.f32().data() == t[3].data.data() + 4 * 8);  // wk[1]: kv_dim x dim in
  CHECK(w.layers[1].wk.shape == std::vector<int64_t>{4, 8});
  CHECK(ck.weight_bytes() == 4 * (checkpoint_floats(h) - 16));
}

TEST_CASE("shared classifier aliases the token embedding", "[checkpoint]") {
  const Checkpoint ck = Checkpoint::open(llama::test::model_path("stories260K.bin"));
  const auto& c = ck.config();
  CHECK(c.dim == 64);
  CHECK(c.hidden_dim == 172);
  CHECK(c.n_layers == 5);
  CHECK(c.n_heads == 8);
  CHECK(c.n_kv_heads == 4);
  CHECK(c.vocab_size == 512);
  CHECK(c.seq_len == 512);
  CHECK(c.shared_classifier);
  CHECK(ck.model().weights.tied());
  CHECK(ck.model().weights.classifier.data.data() ==
        ck.model().weights.token_embedding.data.data());
}

TEST_CASE("checkpoint refuses truncated, corrupt and absurd files", "[checkpoint][bad-input]") {
  const std::vector<int32_t> h = {8, 12, 2, 2, 1, 10, 4};
  const int64_t n = checkpoint_floats(h);

  SECTION("missing file") {
    CHECK_THROWS_WITH(Checkpoint::open(temp_path("does-not-exist.bin")),
                      Contains("does-not-exist.bin") && Contains("cannot open"));
  }
  SECTION("empty file and short header") {
    const std::string p = temp_path("short-header.bin");
    write_file(p, {std::byte{1}, std::byte{2}});
    CHECK_THROWS_WITH(Checkpoint::open(p),
                      Contains("short-header.bin") && Contains("header needs 28 bytes"));
  }
  SECTION("weights cut short: names bytes expected and found") {
    const std::string p = temp_path("truncated.bin");
    write_file(p, make_checkpoint_bytes(h, n - 1));
    CHECK_THROWS_WITH(Checkpoint::open(p), Contains("truncated.bin") && Contains("truncated") &&
                                               Contains(std::to_string(28 + 4 * n)) &&
                                               Contains(std::to_string(28 + 4 * (n - 1))));
  }
  SECTION("zero, negative and huge fields") {
    for (const auto& bad : std::vector<std::vector<int32_t>>{{0, 12, 2, 2, 1, 10, 4},
                                                             {8, 12, -2, 2, 1, 10, 4},
                                                             {8, 12, 2, 2, 1, 10, 0},
                                                             {8, 12, 2, 3, 1, 10, 4}}) {
      const std::string p = temp_path("bad-field.bin");
      write_file(p, make_checkpoint_bytes(bad, 64));
      CHECK_THROWS_AS(Checkpoint::open(p), llama::Error);
    }
    // Huge but consistent: the file cannot hold it, refused without allocating.
    const std::string p = temp_path("huge.bin");
    write_file(p, make_checkpoint_bytes(
                      {1 << 30, 1 << 30, 1 << 20, 1 << 20, 1 << 20, 32000, 1 << 30}, 16));
    CHECK_THROWS_AS(Checkpoint::open(p), llama::Error);
    write_file(p, make_checkpoint_bytes({4096, 11008, 32, 32, 32, 32000, 2000000000}, 16));
    CHECK_THROWS_WITH(Checkpoint::open(p), Contains("truncated"));
  }
  SECTION("version 1/2 magic is named") {
    const std::string p = temp_path("v2.bin");
    write_file(p, make_checkpoint_bytes({0x616b3432, 2, 0, 0, 0, 0, 0}, 64));
    CHECK_THROWS_WITH(Checkpoint::open(p), Contains("v2.bin: version 2 checkpoint"));
  }
  SECTION("a directory is not a checkpoint") {
    CHECK_THROWS_WITH(Checkpoint::open(LLAMA_MODELS_DIR), Contains("not a regular file"));
  }
}
