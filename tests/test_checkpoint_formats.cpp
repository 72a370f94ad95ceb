// Versions 1 and 2 ("ak42") checkpoints: loading, refusal of bad files,
// export.py's layouts written back byte for byte, and the same tokens from
// the same weights whatever the version.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <random>
#include <sstream>

#include "convert_run.hpp"
#include "llama/error.hpp"
#include "llama/formats/llama2c_checkpoint.hpp"
#include "llama/formats/llama2c_writer.hpp"
#include "llama/generate.hpp"
#include "llama/kernels/numbers/dequantize.hpp"
#include "llama/registry.hpp"
#include "test_support.hpp"

using namespace llama;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

namespace {

// Bytes in 4-byte aligned memory that a Checkpoint can parse in place.
struct Buffer {
  std::shared_ptr<std::vector<float>> storage;
  size_t size = 0;
  std::span<const std::byte> bytes() const {
    return {reinterpret_cast<const std::byte*>(storage->data()), size};
  }
};

Buffer buffer_of(const std::string& s) {
  Buffer b{std::make_shared<std::vector<float>>(s.size() / 4 + 1), s.size()};
  std::memcpy(b.storage->data(), s.data(), s.size());
  return b;
}

std::string convert_to_string(const Checkpoint& in, CheckpointFormat format, int64_t gs = 64,
                              WriteReport* report = nullptr) {
  std::ostringstream out;
  const WriteReport r = write_checkpoint(in, {format, gs}, out, "memory");
  if (report) *report = r;
  return out.str();
}

Checkpoint parse(const Buffer& b, const std::string& name) {
  return Checkpoint::parse(b.bytes(), name, b.storage);
}

std::string file_text(const std::string& path) {
  const auto bytes = test::read_file(path);
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

// The one-line error parsing `bytes` gives.
std::string parse_error(const std::string& bytes, const std::string& name) {
  const Buffer b = buffer_of(bytes);
  try {
    (void)parse(b, name);
  } catch (const Error& e) {
    return e.what();
  }
  FAIL("parsing " << name << " did not fail");
  return "";
}

template <typename T>
void poke(std::string& bytes, size_t offset, T value) {
  std::memcpy(bytes.data() + offset, &value, sizeof value);
}

std::vector<int32_t> stream_of(const Checkpoint& ck, const nlohmann::json& c,
                               const std::string& backend_name) {
  return test::generate_case(ck, c, backend_name).stream;
}

}  // namespace

TEST_CASE("a version 2 checkpoint loads with every offset as runq.c maps it", "[formats]") {
  const Checkpoint ck = Checkpoint::open(test::model_path("q-gqa.v2.bin"));
  const Config& c = ck.config();
  CHECK(ck.format() == CheckpointFormat::v2);
  CHECK(ck.group_size() == 64);
  CHECK(c.dim == 128);
  CHECK(c.hidden_dim == 384);
  CHECK(c.n_layers == 3);
  CHECK(c.n_kv_heads == 2);
  CHECK(c.vocab_size == 32000);
  CHECK_FALSE(c.shared_classifier);
  const auto& t = ck.tensors();
  REQUIRE(t.size() == 12);
  CHECK(t[0].name == "rms_att");
  CHECK(t[0].offset == 256);
  CHECK(t[2].offset == 256 + 4 * (2 * 3 * 128));
  // Q8_0 tensors: values then scales (values / 64 floats), layer after layer.
  const int64_t emb = 256 + 4 * (2 * 3 * 128 + 128);
  CHECK(t[3].name == "token_embedding");
  CHECK(t[3].offset == emb);
  const int64_t emb_bytes = 32000 * 128 + 4 * 32000 * 128 / 64;
  CHECK(t[4].name == "wq");
  CHECK(t[4].offset == emb + emb_bytes);
  REQUIRE(t[4].quantized.size() == 3);
  const auto* base = reinterpret_cast<const std::byte*>(t[0].data.data()) - 256;
  const int64_t wq_layer = 128 * 128 + 4 * 128 * 128 / 64;
  CHECK(reinterpret_cast<const std::byte*>(t[4].quantized[1].values.data()) - base ==
        emb + emb_bytes + wq_layer);
  CHECK(reinterpret_cast<const std::byte*>(t[4].quantized[1].scales.data()) - base ==
        emb + emb_bytes + wq_layer + 128 * 128);
  CHECK(t.back().name == "wcls");
  CHECK(ck.weight_bytes() == ck.file_size() - 256);
  // The embedding stays int8 in the mapping; a row is dequantized per token,
  // value for value runq.c's dequantized table.
  const Tensor& emb_view = ck.model().weights.token_embedding;
  CHECK(emb_view.dtype == DType::q8_0);
  CHECK(emb_view.q8_values().data() == t[3].quantized[0].values.data());
  std::vector<float> row(128);
  embedding_row(emb_view, 1, row);
  CHECK(row[5] == float(t[3].quantized[0].values[128 + 5]) * t[3].quantized[0].scales[2]);
}

TEST_CASE("a version 1 file gives exactly version 0's tokens", "[formats][parity]") {
  const Checkpoint v0 = Checkpoint::open(test::model_path("mini32k.bin"));
  const Buffer v1_bytes = buffer_of(convert_to_string(v0, CheckpointFormat::v1));
  const Checkpoint v1 = parse(v1_bytes, "mini32k.v1");
  REQUIRE(v1.format() == CheckpointFormat::v1);
  CHECK(v1.weight_bytes() == v0.weight_bytes());
  for (const auto& name : {"wq", "w2", "token_embedding", "wcls", "rms_final"}) {
    const auto find = [&](const Checkpoint& ck) {
      for (const auto& t : ck.tensors())
        if (t.name == name) return t.data;
      FAIL("no tensor " << name);
      return std::span<const float>();
    };
    const auto a = find(v0), b = find(v1);
    CHECK(std::equal(a.begin(), a.end(), b.begin(), b.end()));
  }
  int compared = 0;
  for (const auto& c : test::load_json(test::reference_path("parity.json"))) {
    if (c["model"] != "mini32k.bin") continue;
    INFO(c["name"].get<std::string>());
    CHECK(stream_of(v1, c, "blas") == c["stream"].get<std::vector<int32_t>>());
    ++compared;
  }
  CHECK(compared > 0);
}

TEST_CASE("export.py's layouts are written back byte for byte", "[formats][convert]") {
  const std::string q_path = test::model_path("q-gqa.v2.bin");
  const std::string q_bytes = file_text(q_path);
  const Checkpoint q = Checkpoint::open(q_path);

  SECTION("v2 to v2 keeps the int8 values") {
    WriteReport r;
    CHECK(convert_to_string(q, CheckpointFormat::v2, 64, &r) == q_bytes);
    CHECK(r.quantized.size() == 9);
    CHECK(r.quantized[0].copied);
  }
  SECTION("v2 -> v0 -> v2 requantizes to the same bytes") {
    const Buffer v0 = buffer_of(convert_to_string(q, CheckpointFormat::v0));
    const Checkpoint f32 = parse(v0, "q.v0");
    CHECK(f32.format() == CheckpointFormat::v0);
    WriteReport r;
    CHECK(convert_to_string(f32, CheckpointFormat::v2, 64, &r) == q_bytes);
    CHECK_FALSE(r.quantized[0].copied);
    CHECK(r.quantized[0].max_error < 1e-6f);  // the values are already on the grid
  }
  SECTION("v0 -> v1 -> v0: identical but for the rotary tables v1 drops") {
    const std::string path = test::model_path("rand-gqa.bin");
    const std::string original = file_text(path);
    const Checkpoint v0 = Checkpoint::open(path);
    const Buffer v1 = buffer_of(convert_to_string(v0, CheckpointFormat::v1));
    const std::string back = convert_to_string(parse(v1, "r.v1"), CheckpointFormat::v0);
    REQUIRE(back.size() == original.size());
    // rand-gqa's tables are zeros; the converter writes export.py's f32 tables.
    const Config& c = v0.config();
    const size_t rope_at = size_t(28 + 4 * (c.parameter_count() - c.vocab_size * c.dim));
    const size_t rope_bytes = size_t(4 * c.seq_len * c.head_size());
    CHECK(back.substr(0, rope_at) == original.substr(0, rope_at));
    CHECK(back.substr(rope_at + rope_bytes) == original.substr(rope_at + rope_bytes));
    float cos1 = 0, sin_first = 1;
    std::memcpy(&cos1, back.data() + rope_at + 4 * (c.head_size() / 2), 4);  // pos 1, pair 0
    std::memcpy(&sin_first, back.data() + rope_at + rope_bytes / 2, 4);      // pos 0
    CHECK(cos1 == std::cos(1.0f));
    CHECK(sin_first == 0.0f);
    // A file with those tables makes the round trip exactly.
    const Buffer b = buffer_of(back);
    const Buffer v1b = buffer_of(convert_to_string(parse(b, "back.v0"), CheckpointFormat::v1));
    CHECK(convert_to_string(parse(v1b, "back.v1"), CheckpointFormat::v0) == back);
    CHECK(convert_to_string(parse(b, "back.v0"), CheckpointFormat::v0) == back);
  }
  SECTION("group size back-off as export.py, then for hidden_dim") {
    const Checkpoint r = Checkpoint::open(test::model_path("rand-gqa.bin"));  // dim 48, hidden 128
    WriteReport report;
    const Buffer b = buffer_of(convert_to_string(r, CheckpointFormat::v2, 64, &report));
    CHECK(report.group_size == 16);
    CHECK(report.backoffs.size() == 2);
    CHECK(parse(b, "r.v2").group_size() == 16);
    const Checkpoint s =
        Checkpoint::open(test::model_path("stories260K.bin"));  // dim 64, hidden 172
    CHECK(q80_group_size(s.config(), 64, nullptr) == 4);
    CHECK_THROWS_AS(q80_group_size(s.config(), 0, nullptr), Error);
  }
}

TEST_CASE("unaligned Q8_0 scales are loaded and run", "[formats][q8]") {
  // dim 6, hidden 10, vocab 5: group size 2, so the embedding's 30 int8
  // values leave its scales off 4-byte alignment.
  const std::vector<int32_t> h = {6, 10, 1, 1, 1, -5, 4};
  const Buffer v0b = buffer_of([&] {
    const auto bytes = test::make_checkpoint_bytes(h, test::checkpoint_floats(h));
    return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  }());
  const Checkpoint v0 = parse(v0b, "tiny.v0");
  WriteReport report;
  const Buffer v2b = buffer_of(convert_to_string(v0, CheckpointFormat::v2, 64, &report));
  REQUIRE(report.group_size == 2);
  const Checkpoint v2 = parse(v2b, "tiny.v2");
  const auto& emb = v2.tensors()[3];
  CHECK(reinterpret_cast<uintptr_t>(emb.quantized[0].scales.data()) % alignof(float) == 0);
  auto blas = BackendRegistry::instance().create("blas", {});
  auto ref = BackendRegistry::instance().create("reference", {});
  blas->prepare(v2.model());
  ref->prepare(v2.model());
  for (int64_t pos = 0; pos < 4; ++pos) {
    const auto a = blas->forward(int32_t(pos + 1), pos);
    const std::vector<float> a_copy(a.begin(), a.end());
    const auto b = ref->forward(int32_t(pos + 1), pos);
    CHECK(std::equal(a_copy.begin(), a_copy.end(), b.begin(), b.end()));
  }
}

TEST_CASE("version 1 and 2 files are refused with one-line reasons", "[formats][bad-input]") {
  const std::string good = file_text(test::model_path("q-gqa.v2.bin"));
  auto refused = [](const std::string& bytes, const std::string& name) {
    const std::string e = parse_error(bytes, name);
    INFO(e);
    CHECK_THAT(e, StartsWith(name + ": "));
    CHECK(e.find('\n') == std::string::npos);
    return e;
  };
  SECTION("unknown versions") {
    for (const int32_t v : {0, 3, -1, 1 << 30}) {
      std::string b = good;
      poke(b, 4, v);
      CHECK_THAT(
          refused(b, "ver.bin"),
          Contains("unsupported checkpoint version " + std::to_string(v)) && Contains("offset 4"));
    }
  }
  SECTION("group sizes that are not positive or do not divide every row") {
    for (const int32_t gs : {0, -64}) {
      std::string b = good;
      poke(b, 37, gs);
      CHECK_THAT(refused(b, "gs.bin"),
                 Contains("group_size (offset 37) is " + std::to_string(gs)) &&
                     Contains("must be positive"));
    }
    std::string b = good;
    poke(b, 37, int32_t{48});
    CHECK_THAT(refused(b, "gs48.bin"), Contains("does not divide dim 128") &&
                                           Contains("partial group") && Contains("runq.c"));
    poke(b, 37, int32_t{256});
    CHECK_THAT(refused(b, "gs256.bin"), Contains("does not divide dim 128"));
    poke(b, 8 + 4, int32_t{400});  // hidden_dim: 32 divides dim 128 but not 400
    poke(b, 37, int32_t{32});
    CHECK_THAT(refused(b, "hidden.bin"), Contains("does not divide hidden_dim 400"));
  }
  SECTION("short files: header and every tensor") {
    CHECK_THAT(refused(good.substr(0, 6), "tiny.bin"), Contains("truncated"));
    CHECK_THAT(refused(good.substr(0, 200), "hdr.bin"),
               Contains("truncated: header needs 256 bytes, file has 200"));
    for (const size_t cut :
         {size_t{256}, size_t{256 + 100}, size_t{5000}, good.size() / 2, good.size() - 1}) {
      CHECK_THAT(refused(good.substr(0, cut), "cut.bin"),
                 Contains("truncated") && Contains("file has " + std::to_string(cut)));
    }
  }
  SECTION("bad header fields") {
    std::string b = good;
    poke(b, 8 + 20, int32_t{-32000});
    CHECK_THAT(refused(b, "vocab.bin"), Contains("vocab_size (offset 28)"));
    b = good;
    b[36] = char{2};
    CHECK_THAT(refused(b, "flag.bin"), Contains("shared_classifier (offset 36) is 2"));
    b = good;
    poke(b, 8, int32_t{0});
    CHECK_THAT(refused(b, "dim.bin"), Contains("version 2 checkpoint") && Contains("dim"));
  }
}

TEST_CASE("llama-cli --verify-checkpoint reports the format and int8 statistics",
          "[formats][cli]") {
  const auto r =
      test::run_llama_cli({"-c", test::model_path("q-gqa.v2.bin"), "--verify-checkpoint"});
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Contains("version 2 (Q8_0), group size 64") &&
                        Contains("wq               [3x128x128]  Q8_0  scales [") &&
                        Contains("dequantized min") && Contains("all values finite"));
  const auto v0 =
      test::run_llama_cli({"-c", test::model_path("rand-gqa.bin"), "--verify-checkpoint"});
  CHECK_THAT(v0.out, Contains("legacy version 0 (f32)") && Contains("f32  min"));
}

TEST_CASE("llama-convert writes files and refuses bad usage in one line", "[convert][cli]") {
  auto run = [](const std::vector<std::string>& args, std::string* out_text = nullptr) {
    std::ostringstream out, err;
    const int code = convert::run_convert(args, out, err);
    if (out_text) *out_text = out.str();
    const std::string e = err.str();
    INFO(e);
    if (code != 0) {
      CHECK_THAT(e, StartsWith("llama-convert: "));
      CHECK(std::count(e.begin(), e.end(), '\n') == 1);
    }
    return code;
  };
  const std::string in = test::model_path("rand-gqa.bin");
  const std::string v2 = test::temp_path("convert.v2"), v0 = test::temp_path("convert.v0");
  std::string text;
  REQUIRE(run({in, v2, "--to", "v2", "--group-size", "32"}, &text) == 0);
  CHECK_THAT(text, Contains("BACKOFF: reducing group size to 16") &&
                       Contains("max quantization error") && Contains("wcls"));
  CHECK(Checkpoint::open(v2).group_size() == 16);
  REQUIRE(run({v2, v0, "--to", "v0"}) == 0);
  CHECK(Checkpoint::open(v0).format() == CheckpointFormat::v0);

  CHECK(run({in, v2}) == 2);                                     // no --to
  CHECK(run({in, v2, "--to", "v3"}) == 2);                       // unknown version
  CHECK(run({in, v2, "--to", "v2", "--group-size", "0"}) == 2);  // not positive
  CHECK(run({in, v2, "--to", "v1", "--group-size", "8"}) == 2);  // v2 only
  CHECK(run({in}) == 2);
  CHECK(run({in, in, "--to", "v1"}) == 1);  // would overwrite its input
  CHECK(run({test::temp_path("missing.bin"), v2, "--to", "v1"}) == 1);
  CHECK(run({in, test::temp_path("no-such-dir/x.bin"), "--to", "v1"}) == 1);
}

TEST_CASE("mutated version 1 and 2 headers parse or fail cleanly", "[formats][bad-input]") {
  const std::string v2 = file_text(test::model_path("q-gqa.v2.bin"));
  const Checkpoint v0 = Checkpoint::open(test::model_path("rand-gqa.bin"));
  const std::string v1 = convert_to_string(v0, CheckpointFormat::v1);
  std::mt19937 rng(11);
  int parsed = 0, refused = 0;
  for (const std::string* original : {&v1, &v2}) {
    for (int round = 0; round < 150; ++round) {
      std::string b =
          original->substr(0, rng() % 3 == 0 ? rng() % original->size() : original->size());
      const int flips = 1 + int(rng() % 3);
      for (int f = 0; f < flips && !b.empty(); ++f) {
        b[rng() % std::min<size_t>(b.size(), 48)] = static_cast<char>(rng() % 256);
      }
      const Buffer buf = buffer_of(b);
      try {
        const Checkpoint ck = parse(buf, "mutated.bin");
        // Touch every view: out-of-range views would trip the sanitizers.
        double sum = 0;
        for (const TensorInfo& t : ck.tensors()) {
          for (float v : t.data) sum += double(v);
          for (const QuantizedTensor& q : t.quantized) {
            for (int8_t v : q.values) sum += v;
            for (float s : q.scales) sum += double(s);
          }
        }
        (void)sum;
        ++parsed;
      } catch (const Error& e) {
        CHECK(std::string(e.what()).find('\n') == std::string::npos);
        ++refused;
      }
    }
  }
  CHECK(parsed + refused == 300);
  CHECK(refused > 0);
}
