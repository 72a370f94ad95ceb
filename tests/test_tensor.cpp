// Typed tensor views, the dtype table, exact bf16/f16 conversion,
// dequantization, and a model's per-layer weights with their validation.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <vector>

#include "llama/error.hpp"
#include "llama/formats/llama2c_checkpoint.hpp"
#include "llama/kernels/numbers/half.hpp"
#include "llama/kernels/numbers/dequantize.hpp"
#include "llama/sampler.hpp"
#include "llama/weights.hpp"
#include "test_support.hpp"

using namespace llama;
using Catch::Matchers::Contains;

namespace {

}  // namespace

TEST_CASE("dtype table and sets", "[tensor]") {
  CHECK(std::string(to_string(DType::f32)) == "f32");
  CHECK(std::string(to_string(DType::bf16)) == "bf16");
  CHECK(std::string(to_string(DType::q8_0)) == "q8_0");
  CHECK(dtype_info(DType::f16).block_bytes == 2);
  CHECK(dtype_info(DType::bf16).is_float);
  CHECK_FALSE(dtype_info(DType::q8_0).is_float);
  const DTypeSet s{DType::f32, DType::q8_0};
  CHECK(s.contains(DType::f32));
  CHECK_FALSE(s.contains(DType::bf16));
  CHECK(s.to_string() == "f32, q8_0");
  CHECK(DTypeSet{}.to_string() == "nothing");
}

TEST_CASE("tensor views check their bytes, shape and dtype, naming the tensor", "[tensor]") {
  std::vector<float> f(12, 1.5f);
  const Tensor t = Tensor::f32_view("w", {3, 4}, f);
  CHECK(t.rows() == 3);
  CHECK(t.cols() == 4);
  CHECK(t.elements() == 12);
  CHECK(t.shape_string() == "[3x4]");
  CHECK(t.describe() == "w f32 [3x4]");
  CHECK(t.f32().data() == f.data());
  CHECK_THROWS_WITH(t.u16(), Contains("tensor w is f32"));
  CHECK_THROWS_WITH(t.q8_values(), Contains("tensor w is f32"));
  const Tensor v = Tensor::f32_view("norm", {12}, f);
  CHECK(v.rows() == 1);
  CHECK(v.shape_string() == "[12]");

  const auto bytes = std::as_bytes(std::span<const float>(f));
  CHECK_THROWS_WITH(Tensor::view("short", DType::f32, {4, 4}, bytes),
                    Contains("tensor short") && Contains("needs 64 bytes, has 48"));
  CHECK_THROWS_WITH(Tensor::view("zero", DType::bf16, {0, 4}, bytes), Contains("not positive"));
  CHECK_THROWS_WITH(Tensor::view("none", DType::f32, {}, bytes), Contains("empty shape"));
  CHECK_THROWS_WITH(Tensor::view("huge", DType::f32, {int64_t{1} << 40, int64_t{1} << 40}, bytes),
                    Contains("overflow"));
  CHECK_THROWS_WITH(Tensor::view("q", DType::q8_0, {12}, bytes), Contains("scales"));
  // Unaligned f32: the view is refused when read as floats.
  const Tensor odd = Tensor::view("odd", DType::f32, {2}, bytes.subspan(1, 8));
  CHECK_THROWS_WITH(odd.f32(), Contains("tensor odd") && Contains("aligned"));

  std::vector<int8_t> q(8, 3);
  std::vector<float> s = {0.5f, 2.0f};
  const Tensor qt = Tensor::q8_view("wq[0]", {2, 4}, q, s, 4);
  CHECK(qt.describe() == "wq[0] q8_0 (groups of 4) [2x4]");
  CHECK_THROWS_WITH(Tensor::q8_view("g", {2, 4}, q, s, 3), Contains("group size 3"));
  CHECK_THROWS_WITH(Tensor::q8_view("n", {2, 4}, q, std::span(s).first(1), 4),
                    Contains("1 scales"));
}

TEST_CASE("dequantize_rows and embedding_row give every dtype's f32 values", "[tensor]") {
  const std::vector<float> f = {1.0f, -2.5f, 3.25f, 0.0f, 7.0f, -0.125f};
  std::vector<uint16_t> b, h;
  for (float v : f) {
    b.push_back(f32_to_bf16(v));
    h.push_back(f32_to_f16(v));
  }
  const std::vector<int8_t> q = {1, -2, 3, 4, -5, 6};
  const std::vector<float> s = {0.5f, 2.0f, -1.0f};
  const Tensor tensors[] = {
      Tensor::f32_view("f", {3, 2}, f),
      Tensor::view("b", DType::bf16, {3, 2}, std::as_bytes(std::span<const uint16_t>(b))),
      Tensor::view("h", DType::f16, {3, 2}, std::as_bytes(std::span<const uint16_t>(h))),
      Tensor::q8_view("q", {3, 2}, q, s, 2)};
  const std::vector<float> q_want = {0.5f, -1.0f, 6.0f, 8.0f, 5.0f, -6.0f};
  for (const Tensor& t : tensors) {
    INFO(t.describe());
    const std::vector<float>& want = t.dtype == DType::q8_0 ? q_want : f;  // f is exact in bf16/f16
    std::vector<float> all(6);
    dequantize(t, all);
    CHECK(all == want);
    std::vector<float> row(2);
    embedding_row(t, 2, row);
    CHECK(row == std::vector<float>(want.begin() + 4, want.end()));
    CHECK_THROWS_WITH(embedding_row(t, 3, row), Contains("token 3") && Contains(t.name));
    CHECK_THROWS_AS(dequantize_rows(t, 1, 4, all), Error);
    CHECK_THROWS_AS(dequantize_rows(t, 0, 3, row), Error);  // out too small
  }
}

TEST_CASE("llama2.c checkpoints give per-layer views of the file, no copy", "[tensor][weights]") {
  for (const char* file : {"rand-gqa.bin", "q-gqa.v2.bin"}) {
    INFO(file);
    const Checkpoint ck = Checkpoint::open(test::model_path(file));
    const Config& c = ck.config();
    const ModelWeights& w = ck.model().weights;
    REQUIRE(w.layers.size() == size_t(c.n_layers));
    CHECK_NOTHROW(validate_weights(w, c, file));
    const bool q8 = ck.format() == CheckpointFormat::v2;
    CHECK(w.dtypes().to_string() == (q8 ? "f32, q8_0" : "f32"));
    for (const TensorInfo& t : ck.tensors()) {
      if (t.name != "wq" && t.name != "rms_att") continue;
      for (int64_t l = 0; l < c.n_layers; ++l) {
        const LayerWeights& layer = w.layers[size_t(l)];
        const Tensor& view = t.name == "wq" ? layer.wq : layer.attention_norm;
        CHECK(view.name == t.name + "[" + std::to_string(l) + "]");
        const void* want = t.quantized.empty()
                               ? static_cast<const void*>(t.data.data() + l * view.elements())
                               : static_cast<const void*>(t.quantized[size_t(l)].values.data());
        CHECK(static_cast<const void*>(view.data.data()) == want);
      }
    }
    CHECK(w.tied() == c.shared_classifier);
    // Every byte of the weights once (the tied classifier not twice).
    int64_t file_bytes = 0;
    for (const TensorInfo& t : ck.tensors()) {
      file_bytes += int64_t(t.data.size_bytes());
      for (const auto& qt : t.quantized)
        file_bytes += int64_t(qt.values.size() + qt.scales.size_bytes());
    }
    CHECK(w.bytes() == file_bytes);
  }
}

TEST_CASE("validate_weights and require_dtypes refuse in one line naming the tensor",
          "[tensor][weights]") {
  const Checkpoint ck = Checkpoint::open(test::model_path("rand-gqa.bin"));
  const Config& c = ck.config();
  const ModelWeights& good = ck.model().weights;
  auto refused = [&](auto mutate, const std::string& why) {
    ModelWeights w = good;
    mutate(w);
    CHECK_THROWS_WITH(validate_weights(w, c, "m.bin"), Contains("m.bin: ") && Contains(why));
  };
  refused([](ModelWeights& w) { w.layers.pop_back(); }, "layers of tensors");
  refused([](ModelWeights& w) { std::swap(w.layers[1].wq, w.layers[1].wk); },
          "tensor wk[1] (wq) has shape");
  refused([](ModelWeights& w) { w.layers[0].w2 = {}; }, "missing tensor: w2 (down)");
  refused([](ModelWeights& w) { w.classifier = w.final_norm; }, "classifier");
  // Tied or not, the classifier tensor must agree with the config.
  ModelWeights flipped = good;
  std::vector<float> copy(good.token_embedding.f32().begin(), good.token_embedding.f32().end());
  flipped.classifier = c.shared_classifier
                           ? Tensor::f32_view("wcls", good.token_embedding.shape, copy)
                           : good.token_embedding;
  CHECK_THROWS_WITH(validate_weights(flipped, c, "m.bin"), Contains("tied"));
  std::vector<int8_t> q(size_t(c.dim), 1);
  std::vector<float> s(1, 1.0f);
  ModelWeights q_norm = good;
  q_norm.final_norm = Tensor::q8_view("rms_final", {c.dim}, q, s, c.dim);
  CHECK_THROWS_WITH(validate_weights(q_norm, c, "m.bin"),
                    Contains("tensor rms_final is q8_0; norm gains must be f32, bf16 or f16"));
  CHECK_NOTHROW(require_dtypes(good, "mine", {DType::f32}));
  CHECK_THROWS_WITH(require_dtypes(q_norm, "mine", {DType::f32, DType::bf16}),
                    "mine: tensor rms_final is q8_0, which mine does not run (it runs f32, bf16)");
}
