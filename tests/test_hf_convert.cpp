// llama-convert between Hugging Face directories and llama2.c files: stories1M.bin
// becomes the shared hf/stories1M (f32) and hf/stories1M-bf16 tensor for tensor,
// with tok2048's tokenizer.json; hf/stories1M becomes stories1M.bin again; models
// llama2.c cannot describe are refused by name.
#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "convert_run.hpp"
#include "llama/formats/hf_model.hpp"
#include "llama/formats/llama2c_checkpoint.hpp"
#include "llama/formats/safetensors.hpp"
#include "test_support.hpp"

using namespace llama;
using Catch::Contains;
namespace fs = std::filesystem;

namespace {

struct Run {
  int code;
  std::string out, err;
};
Run convert_with(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  const int code = convert::run_convert(args, out, err);
  return {code, out.str(), err.str()};
}

// Every tensor of `a` has the name, dtype, shape and bytes of one of `b`'s.
void require_same_tensors(const std::string& a, const std::string& b) {
  const SafetensorsFile fa = SafetensorsFile::open(a), fb = SafetensorsFile::open(b);
  REQUIRE(fa.tensors().size() == fb.tensors().size());
  for (const SafetensorsTensor& t : fa.tensors()) {
    INFO(t.name);
    const SafetensorsTensor* u = fb.find(t.name);
    REQUIRE(u != nullptr);
    CHECK(t.dtype == u->dtype);
    CHECK(t.shape == u->shape);
    REQUIRE(t.bytes.size() == u->bytes.size());
    const bool same = std::equal(t.bytes.begin(), t.bytes.end(), u->bytes.begin());
    CHECK(same);
  }
}

}  // namespace

TEST_CASE("llama-convert --to hf writes stories1M.bin as the shared HF directory",
          "[hf][convert]") {
  const std::string dtype = GENERATE(as<std::string>{}, "f32", "bf16");
  const std::string shared =
      test::model_path(dtype == "f32" ? "hf/stories1M" : "hf/stories1M-bf16");
  const std::string dir = test::temp_path("stories1M-" + dtype);
  fs::remove_all(dir);
  const Run r = convert_with({test::model_path("stories1M.bin"), dir, "--to", "hf", "--dtype",
                              dtype, "--tokenizer", test::model_path("tok2048.bin")});
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Contains("tokenizer.json from"));
  CHECK_FALSE(fs::exists(dir + ".partial"));
  require_same_tensors(dir + "/model.safetensors", shared + "/model.safetensors");
  const bool same_tokenizer = test::load_json(dir + "/tokenizer.json") ==
                              test::load_json(shared + "/tokenizer.json");
  CHECK(same_tokenizer);  // as JSON values (the shared file is indented)
  // The directory opens as the shared one does: the same Config.
  const HfModel mine = open_hf_model(dir), theirs = open_hf_model(shared);
  CHECK(mine.model.config.to_string() == theirs.model.config.to_string());
  CHECK(mine.model.config.eos_ids == theirs.model.config.eos_ids);
  // A second run refuses to overwrite it.
  const Run again = convert_with({test::model_path("stories1M.bin"), dir, "--to", "hf"});
  CHECK(again.code == 1);
  CHECK_THAT(again.err, Contains("exists"));
}

TEST_CASE("llama-convert writes an HF directory as llama2.c's export.py would", "[hf][convert]") {
  // hf/stories1M is stories1M.bin exported: back to version 0, the same
  // header and weights (the rotary tables after them, which run.c ignores, are
  // llama-convert's own f32 ones, within 1e-6 of export.py's torch values).
  const std::string v0 = test::temp_path("from-hf.v0.bin");
  const Run r = convert_with({test::model_path("hf/stories1M"), v0, "--to", "v0"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  const std::vector<std::byte> ours = test::read_file(v0);
  const std::vector<std::byte> theirs = test::read_file(test::model_path("stories1M.bin"));
  REQUIRE(ours.size() == theirs.size());
  const Checkpoint bin = Checkpoint::open(test::model_path("stories1M.bin"));
  const Config& c = bin.config();
  const auto tables = static_cast<size_t>(c.seq_len * c.head_dim * 4);  // cos and sin, f32
  const size_t weights_end = ours.size() - tables;
  const auto at = std::mismatch(ours.begin(), ours.end(), theirs.begin()).first - ours.begin();
  CHECK(at >= static_cast<std::ptrdiff_t>(weights_end));  // the first differing byte
  double worst = 0;
  for (size_t i = weights_end; i < ours.size(); i += 4) {
    float a, b;
    std::memcpy(&a, ours.data() + i, 4);
    std::memcpy(&b, theirs.data() + i, 4);
    worst = std::max(worst, std::abs(static_cast<double>(a) - b));
  }
  CHECK(worst <= 1e-6);
  // f16 weights, two shards, untied, GQA: widened exactly, q/k rows permuted back.
  const std::string v1 = test::temp_path("mistral.v1.bin");
  const Run m = convert_with({test::model_path("hf/rand-mistral-f16"), v1, "--to", "v1"});
  INFO(m.err);
  REQUIRE(m.code == 0);
  const Checkpoint ck = Checkpoint::open(v1);
  CHECK_FALSE(ck.config().shared_classifier);
  CHECK(ck.config().n_kv_heads == 2);
  CHECK(ck.config().seq_len == 512);
}

TEST_CASE("llama-convert refuses what llama2.c files cannot hold, and bad flags", "[hf][convert]") {
  const Run l3 =
      convert_with({test::model_path("hf/rand-llama3"), test::temp_path("l3.bin"), "--to", "v0"});
  CHECK(l3.code == 1);
  CHECK_THAT(l3.err, Contains("a llama2.c checkpoint cannot hold this model: head_dim 32 is not "
                              "dim / n_heads (96 / 4)"));
  CHECK_FALSE(fs::exists(test::temp_path("l3.bin")));
  const Run hf =
      convert_with({test::model_path("hf/stories1M"), test::temp_path("x"), "--to", "hf"});
  CHECK(hf.code == 1);
  CHECK_THAT(hf.err, Contains("is a Hugging Face checkpoint already"));
  const Run dtype = convert_with(
      {test::model_path("stories1M.bin"), test::temp_path("y"), "--to", "v0", "--dtype", "bf16"});
  CHECK(dtype.code == 2);
  CHECK_THAT(dtype.err, Contains("--dtype: only applies to --to hf"));
  const Run bad = convert_with(
      {test::model_path("stories1M.bin"), test::temp_path("z"), "--to", "hf", "--dtype", "f8"});
  CHECK(bad.code == 2);
  CHECK_THAT(bad.err, Contains("--dtype: must be f32, bf16 or f16, got 'f8'"));
}
