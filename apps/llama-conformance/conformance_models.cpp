// In-memory random models, the rotate_half permutation and dtype conversion.
#include "conformance_models.hpp"

#include <algorithm>
#include <memory>

#include "llama/error.hpp"
#include "llama/kernels/numbers/dequantize.hpp"
#include "llama/kernels/numbers/half.hpp"
#include "llama/kernels/products/llama2c_int8.hpp"
#include "llama/sampler.hpp"

namespace llama::conformance {
namespace {

// Owned memory behind a model's views: one buffer per tensor.
struct Buffers {
  std::vector<std::vector<std::byte>> bytes;
  std::span<const std::byte> add(size_t n) {
    // Whole floats so that f32 and q8 scales stay 4-byte aligned.
    bytes.emplace_back((n + 3) / 4 * 4);
    return std::span<const std::byte>(bytes.back()).first(n);
  }
};

// Applies `make(tensor) -> new tensor` to every distinct tensor of `w`,
// keeping a tied classifier tied.
template <typename Make>
ModelWeights map_tensors(const ModelWeights& w, const Make& make) {
  ModelWeights out;
  out.token_embedding = make(w.token_embedding, false);
  for (const LayerWeights& l : w.layers) {
    LayerWeights n;
    for (Tensor LayerWeights::*m : kLayerTensors) {
      const bool norm = m == &LayerWeights::attention_norm || m == &LayerWeights::ffn_norm;
      n.*m = make(l.*m, norm);
    }
    out.layers.push_back(std::move(n));
  }
  out.final_norm = make(w.final_norm, true);
  out.classifier = w.tied() ? out.token_embedding : make(w.classifier, false);
  return out;
}

std::shared_ptr<const void> keep_both(std::shared_ptr<const void> a,
                                      std::shared_ptr<const void> b) {
  return std::make_shared<std::pair<std::shared_ptr<const void>, std::shared_ptr<const void>>>(
      std::move(a), std::move(b));
}

Config variant(Config c, const std::string& what) {
  c.validate(what);
  return c;
}

std::vector<float> values_of(const Tensor& t) {
  std::vector<float> v(static_cast<size_t>(t.elements()));
  dequantize(t, v);
  return v;
}

}  // namespace

Model random_model(const Config& config, uint64_t seed, const std::string& name) {
  config.validate(name);
  const int64_t dim = config.dim, q = config.q_dim(), kv = config.kv_dim(), h = config.hidden_dim;
  auto buffers = std::make_shared<Buffers>();
  Rng rng(seed);
  const auto tensor = [&](const std::string& tensor_name, std::vector<int64_t> shape) {
    int64_t n = 1;
    for (const int64_t d : shape) n *= d;
    const auto bytes = buffers->add(static_cast<size_t>(n) * sizeof(float));
    auto* f = reinterpret_cast<float*>(const_cast<std::byte*>(bytes.data()));
    for (int64_t i = 0; i < n; ++i) f[i] = rng.next_f32() - 0.5f;
    return Tensor::view(tensor_name, DType::f32, std::move(shape), bytes);
  };
  Model m;
  m.source = name;
  m.config = config;
  ModelWeights& w = m.weights;
  w.token_embedding = tensor("token_embedding", {config.vocab_size, dim});
  for (int64_t l = 0; l < config.n_layers; ++l) {
    std::string at = "[";
    at.append(std::to_string(l)).append("]");  // not +: GCC 12 -Wrestrict
    w.layers.push_back(
        {tensor("rms_att" + at, {dim}), tensor("wq" + at, {q, dim}), tensor("wk" + at, {kv, dim}),
         tensor("wv" + at, {kv, dim}), tensor("wo" + at, {dim, q}), tensor("rms_ffn" + at, {dim}),
         tensor("w1" + at, {h, dim}), tensor("w2" + at, {dim, h}), tensor("w3" + at, {h, dim})});
  }
  w.final_norm = tensor("rms_final", {dim});
  w.classifier =
      config.shared_classifier ? w.token_embedding : tensor("wcls", {config.vocab_size, dim});
  w.storage = buffers;
  validate_weights(w, config, name);
  return m;
}

Model with_halves_layout(const Model& in) {
  const Config& c = in.config;
  if (c.rope_layout != RopeLayout::interleaved) throw Error("with_halves_layout: not interleaved");
  auto buffers = std::make_shared<Buffers>();
  const int64_t hd = c.head_dim;
  Model out = in;
  out.source = in.source + " (rotate_half rows)";
  out.config.rope_layout = RopeLayout::halves;
  // Row j of a head in halves order is interleaved row 2j (first half) or
  // 2(j - hd/2) + 1 (second half).
  const auto permuted = [&](const Tensor& t) {
    const std::vector<float> v = values_of(t);
    const int64_t cols = t.cols();
    const auto bytes = buffers->add(v.size() * sizeof(float));
    auto* f = reinterpret_cast<float*>(const_cast<std::byte*>(bytes.data()));
    for (int64_t r = 0; r < t.rows(); ++r) {
      const int64_t head = r / hd, j = r % hd;
      const int64_t src = head * hd + (j < hd / 2 ? 2 * j : 2 * (j - hd / 2) + 1);
      std::copy_n(v.begin() + src * cols, cols, f + r * cols);
    }
    return Tensor::view(t.name, DType::f32, t.shape, bytes);
  };
  for (LayerWeights& l : out.weights.layers) {
    l.wq = permuted(l.wq);
    l.wk = permuted(l.wk);
  }
  out.weights.storage = keep_both(in.weights.storage, buffers);
  return out;
}

Model with_dtype(const Model& in, DType dtype, int64_t group_size, bool norms_too) {
  auto buffers = std::make_shared<Buffers>();
  const auto convert = [&](const Tensor& t, bool norm) {
    if (norm && (!norms_too || dtype == DType::q8_0)) return t;
    const std::vector<float> v = values_of(t);
    if (dtype == DType::q8_0) {
      const auto values = buffers->add(v.size());
      const auto scales = buffers->add(v.size() / static_cast<size_t>(group_size) * 4);
      auto* q = reinterpret_cast<int8_t*>(const_cast<std::byte*>(values.data()));
      auto* s = reinterpret_cast<float*>(const_cast<std::byte*>(scales.data()));
      quantize_q80(v, group_size, {q, v.size()}, {s, v.size() / static_cast<size_t>(group_size)});
      return Tensor::q8_view(t.name, t.shape, {q, v.size()},
                             {s, v.size() / static_cast<size_t>(group_size)}, group_size);
    }
    const auto bytes = buffers->add(v.size() * 2);
    auto* h = reinterpret_cast<uint16_t*>(const_cast<std::byte*>(bytes.data()));
    for (size_t i = 0; i < v.size(); ++i) {
      h[i] = dtype == DType::bf16 ? f32_to_bf16(v[i]) : f32_to_f16(v[i]);
    }
    return Tensor::view(t.name, dtype, t.shape, bytes);
  };
  Model out = in;
  out.source = in.source + " (" + to_string(dtype) + ")";
  out.weights = map_tensors(in.weights, convert);
  // Unconverted norms still view the input's memory.
  out.weights.storage = keep_both(in.weights.storage, buffers);
  validate_weights(out.weights, out.config, out.source);
  return out;
}

Model widened_to_f32(const Model& in) {
  auto buffers = std::make_shared<Buffers>();
  const auto widen = [&](const Tensor& t, bool) {
    const std::vector<float> v = values_of(t);
    const auto bytes = buffers->add(v.size() * sizeof(float));
    std::copy_n(reinterpret_cast<const std::byte*>(v.data()), bytes.size(),
                const_cast<std::byte*>(bytes.data()));
    return Tensor::view(t.name, DType::f32, t.shape, bytes);
  };
  Model out = in;
  out.source = in.source + " (widened to f32)";
  out.weights = map_tensors(in.weights, widen);
  out.weights.storage = buffers;
  return out;
}

std::vector<NamedConfig> variant_configs() {
  std::vector<NamedConfig> v;
  // dim 48, 4 heads of 16: queries 64 wide, wider than the residual stream.
  Config wide = Config::llama2c(48, 64, 2, 4, 2, 64, 12, true);
  wide.head_dim = 16;
  v.push_back({"head_dim 16, n_heads x head_dim 64 > dim 48", variant(wide, "wide")});
  // dim 64, 4 heads of 8: queries 32 wide, narrower than the residual stream.
  Config narrow = Config::llama2c(64, 96, 2, 4, 1, 64, 12, false);
  narrow.head_dim = 8;
  v.push_back({"head_dim 8, n_heads x head_dim 32 < dim 64, separate classifier",
               variant(narrow, "narrow")});
  // Llama 3's rope: theta 500000 and llama3 scaling with a short original
  // context, so that pairs fall in all three regions; eps 1e-6.
  Config llama3 = Config::llama2c(32, 64, 2, 2, 1, 64, 16, true);
  llama3.rope_theta = 500000.0;
  llama3.norm_eps = 1e-6;
  llama3.rope_scaling = {RopeScalingType::llama3, 8.0, 1.0, 4.0, 64};
  v.push_back({"theta 500000, llama3 scaling, eps 1e-6", variant(llama3, "llama3")});
  Config linear = Config::llama2c(32, 64, 2, 4, 4, 64, 16, true);
  linear.rope_scaling.type = RopeScalingType::linear;
  linear.rope_scaling.factor = 4.0;
  v.push_back({"linear scaling by 4", variant(linear, "linear")});
  return v;
}

}  // namespace llama::conformance
