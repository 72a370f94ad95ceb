// llama-convert reading GGUF files: llama.cpp's stories1M.f32.gguf back to
// llama2.c is stories1M.bin's weights bit for bit, block-quantized files are
// dequantized exactly for every target, a GGUF output keeps the input's
// vocabulary, and what llama2.c cannot hold is refused with one line.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "convert_run.hpp"
#include "gguf_tiny.hpp"
#include "llama/formats/gguf_file.hpp"
#include "llama/formats/gguf_llama.hpp"
#include "llama/formats/gguf_model.hpp"
#include "llama/formats/hf_model.hpp"
#include "llama/formats/llama2c_checkpoint.hpp"
#include "llama/kernels/numbers/dequantize.hpp"
#include "test_support.hpp"

using namespace llama;

namespace {

int run(const std::vector<std::string>& args, std::string& out) {
  std::ostringstream o, e;
  const int rc = convert::run_convert(args, o, e);
  out = o.str() + e.str();
  return rc;
}

std::vector<float> values(const Tensor& t) {
  std::vector<float> v(static_cast<size_t>(t.elements()));
  dequantize(t, v);
  return v;
}

}  // namespace

TEST_CASE("gguf convert: stories1M.f32.gguf to llama2.c is stories1M.bin", "[gguf][convert]") {
  const std::string out = test::temp_path("from-gguf.bin");
  std::string msg;
  REQUIRE(run({test::model_path("gguf/stories1M.f32.gguf"), out, "--to", "v1"}, msg) == 0);
  INFO(msg);
  CHECK(msg.find("stories1M.f32.gguf (GGUF) -> ") != std::string::npos);
  const Checkpoint ours = Checkpoint::open(out);
  const Checkpoint theirs = Checkpoint::open(test::model_path("stories1M.bin"));
  CHECK(ours.config().dim == theirs.config().dim);
  auto find = [](const Checkpoint& ck, const std::string& name) -> std::span<const float> {
    for (const TensorInfo& t : ck.tensors()) {
      if (t.name == name) return t.data;
    }
    FAIL("no tensor " << name);
    return {};
  };
  auto same = [](std::span<const float> a, std::span<const float> b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size_bytes()) == 0;
  };
  for (const TensorInfo& b : theirs.tensors()) {
    INFO(b.name);
    CHECK(same(find(ours, b.name), b.data));
  }
  // convert-llama2c-to-ggml wrote stories1M's tied classifier as output.weight.
  CHECK_FALSE(ours.config().shared_classifier);
  CHECK(same(find(ours, "wcls"), find(theirs, "token_embedding")));
}

TEST_CASE("gguf convert: block files to every target, dequantized exactly", "[gguf][convert]") {
  const gguf::GgufModel in = gguf::open_model(test::model_path("gguf/rand-k.q4_k_m.gguf"));
  std::string msg;
  // llama2.c version 1: every value the exact dequantization of the block.
  const std::string v1 = test::temp_path("rand-k.v1.bin");
  REQUIRE(run({test::model_path("gguf/rand-k.q4_k_m.gguf"), v1, "--to", "v1"}, msg) == 0);
  const Checkpoint ck = Checkpoint::open(v1);
  const ModelWeights& a = ck.model().weights;
  const ModelWeights& b = in.model.weights;
  for (size_t l = 0; l < b.layers.size(); ++l) {
    for (Tensor LayerWeights::*m : kLayerTensors) {
      INFO((b.layers[l].*m).describe());
      CHECK(values(a.layers[l].*m) == values(b.layers[l].*m));
    }
  }
  CHECK(values(a.classifier) == values(b.classifier));

  // GGUF Q4_0 from a GGUF Q8_0: the input's vocabulary is carried over.
  const std::string q4 = test::temp_path("stories1M.requant.q4_0.gguf");
  REQUIRE(run({test::model_path("gguf/stories1M.q8_0.gguf"), q4, "--to", "gguf-q4_0"}, msg) == 0);
  INFO(msg);
  CHECK(msg.find("(GGUF Q4_0, vocabulary of ") != std::string::npos);
  const gguf::GgufModel out = gguf::open_model(q4);
  REQUIRE(out.tokenizer != nullptr);
  const gguf::GgufModel src = gguf::open_model(test::model_path("gguf/stories1M.q8_0.gguf"));
  CHECK(out.tokenizer->encode("Once upon a time, Lily", {}) ==
        src.tokenizer->encode("Once upon a time, Lily", {}));
  CHECK(out.model.weights.layers[0].wq.dtype == DType::q4_0);
  CHECK(out.model.config.eos_ids == src.model.config.eos_ids);

  // A Hugging Face directory from a GGUF F16 file (q/k rows to rotate_half).
  const std::string dir = test::temp_path("stories1M-from-gguf-hf");
  std::filesystem::remove_all(dir);
  REQUIRE(run({test::model_path("gguf/stories1M.f16.gguf"), dir, "--to", "hf", "-k",
               test::model_path("tok2048.bin")},
              msg) == 0);
  const HfModel hf = open_hf_model(dir);
  const gguf::GgufModel f16 = gguf::open_model(test::model_path("gguf/stories1M.f16.gguf"));
  CHECK(hf.model.config.dim == f16.model.config.dim);
  CHECK(values(hf.model.weights.layers[2].w2) == values(f16.model.weights.layers[2].w2));
  CHECK(values(hf.model.weights.layers[2].wq) != values(f16.model.weights.layers[2].wq));
}

TEST_CASE("gguf convert: what llama2.c cannot hold is refused with one line", "[gguf][convert]") {
  test::TinyLlama spec;
  spec.edit = [](gguf::Writer& w) { w.set_f32("llama.rope.freq_base", 500000.0f); };
  const std::string path = test::temp_path("theta.gguf");
  test::write_file(path, test::tiny_llama_gguf(spec));
  const std::string out = test::temp_path("theta.bin");
  std::string msg;
  CHECK(run({path, out, "--to", "v1"}, msg) == 1);
  CHECK(msg.rfind(
            "llama-convert: " + out + ": a llama2.c checkpoint cannot hold this model: rope_theta",
            0) == 0);
  CHECK(std::count(msg.begin(), msg.end(), '\n') == 1);
  CHECK_FALSE(std::filesystem::exists(out));
  // A truncated GGUF input (the magic and half a version): one line naming it.
  const std::string magic = "GGUF";
  std::vector<std::byte> bad(magic.size() + 2);
  std::memcpy(bad.data(), magic.data(), magic.size());
  test::write_file(path, bad);
  CHECK(run({path, out, "--to", "gguf-q8_0"}, msg) == 1);
  CHECK(msg.rfind("llama-convert: " + path + ": ", 0) == 0);
  CHECK(std::count(msg.begin(), msg.end(), '\n') == 1);
}
