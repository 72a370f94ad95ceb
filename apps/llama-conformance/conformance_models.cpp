// In-memory random models and the rotate_half permutation.
#include "conformance_models.hpp"

#include <algorithm>
#include <memory>

#include "llama/error.hpp"
#include "llama/sampler.hpp"

namespace llama::conformance {
namespace {

// Every tensor of a flat-layout model, back to back in one owned buffer.
struct Layout {
  int64_t embedding, layers[9], final_norm, classifier, total;
};

Layout layout_of(const Config& c) {
  const int64_t L = c.n_layers, dim = c.dim, q = c.q_dim(), kv = c.kv_dim(), h = c.hidden_dim;
  Layout s{};
  const int64_t per_layer[9] = {dim, q * dim, kv * dim, kv * dim, dim * q,
                                dim, h * dim, dim * h,  h * dim};
  int64_t at = 0;
  s.embedding = at;
  at += c.vocab_size * dim;
  for (int i = 0; i < 9; ++i) {
    s.layers[i] = at;
    at += L * per_layer[i];
  }
  s.final_norm = at;
  at += dim;
  s.classifier = c.shared_classifier ? s.embedding : at;
  if (!c.shared_classifier) at += c.vocab_size * dim;
  s.total = at;
  return s;
}

TransformerWeights views(const Config& c, const std::vector<float>& all) {
  const Layout s = layout_of(c);
  const int64_t L = c.n_layers, dim = c.dim, q = c.q_dim(), kv = c.kv_dim(), h = c.hidden_dim;
  auto span = [&](int64_t at, int64_t n) {
    return std::span<const float>(all).subspan(static_cast<size_t>(at), static_cast<size_t>(n));
  };
  TransformerWeights w;
  w.layout = WeightLayout::flat;
  w.format = WeightFormat::f32;
  w.token_embedding = span(s.embedding, c.vocab_size * dim);
  w.flat = {span(s.layers[0], L * dim),      span(s.layers[1], L * q * dim),
            span(s.layers[2], L * kv * dim), span(s.layers[3], L * kv * dim),
            span(s.layers[4], L * dim * q),  span(s.layers[5], L * dim),
            span(s.layers[6], L * h * dim),  span(s.layers[7], L * dim * h),
            span(s.layers[8], L * h * dim)};
  w.rms_final = span(s.final_norm, dim);
  w.wcls = span(s.classifier, c.vocab_size * dim);
  return w;
}

// The typed per-layer views of the same buffer (what backends read once they
// leave TransformerWeights).
ModelWeights typed_views(const Config& c, const std::vector<float>& all) {
  const Layout s = layout_of(c);
  const int64_t L = c.n_layers, dim = c.dim, q = c.q_dim(), kv = c.kv_dim(), h = c.hidden_dim;
  auto view = [&](const std::string& name, int64_t at, std::vector<int64_t> shape) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return Tensor::f32_view(
        name, std::move(shape),
        std::span<const float>(all).subspan(static_cast<size_t>(at), static_cast<size_t>(n)));
  };
  ModelWeights w;
  w.token_embedding = view("token_embedding", s.embedding, {c.vocab_size, dim});
  const std::vector<int64_t> shapes[9] = {{dim}, {q, dim}, {kv, dim}, {kv, dim}, {dim, q},
                                          {dim}, {h, dim}, {dim, h},  {h, dim}};
  const char* names[9] = {"rms_att", "wq", "wk", "wv", "wo", "rms_ffn", "w1", "w2", "w3"};
  w.layers.resize(static_cast<size_t>(L));
  for (int i = 0; i < 9; ++i) {
    int64_t per = 1;
    for (int64_t d : shapes[i]) per *= d;
    for (int64_t l = 0; l < L; ++l) {
      w.layers[static_cast<size_t>(l)].*kLayerTensors[i] = view(
          std::string(names[i]) + "[" + std::to_string(l) + "]", s.layers[i] + l * per, shapes[i]);
    }
  }
  w.final_norm = view("rms_final", s.final_norm, {dim});
  w.classifier =
      c.shared_classifier ? w.token_embedding : view("wcls", s.classifier, {c.vocab_size, dim});
  return w;
}

Config variant(Config c, const std::string& what) {
  c.validate(what);
  return c;
}

}  // namespace

Model random_model(const Config& config, uint64_t seed, const std::string& name) {
  config.validate(name);
  auto all = std::make_shared<std::vector<float>>(static_cast<size_t>(layout_of(config).total));
  Rng rng(seed);
  for (float& v : *all) v = rng.next_f32() - 0.5f;
  Model m;
  m.source = name;
  m.config = config;
  m.legacy_weights = views(config, *all);
  m.legacy_weights.storage = all;
  m.weights = typed_views(config, *all);
  m.weights.storage = all;
  validate_weights(m.weights, config, name);
  return m;
}

Model with_halves_layout(const Model& in) {
  const Config& c = in.config;
  if (c.rope_layout != RopeLayout::interleaved) throw Error("with_halves_layout: not interleaved");
  const TransformerWeights flat = to_flat(in.legacy_weights, c);
  auto all = std::make_shared<std::vector<float>>(static_cast<size_t>(layout_of(c).total));
  Model out;
  out.source = in.source + " (rotate_half rows)";
  out.config = c;
  out.config.rope_layout = RopeLayout::halves;
  out.legacy_weights = views(c, *all);
  out.legacy_weights.storage = all;
  out.weights = typed_views(c, *all);
  out.weights.storage = all;
  // Copy everything, then reorder the rows of each head of wq and wk.
  const auto base = [&](std::span<const float> view) { return view.data() - all->data(); };
  const auto copy = [&](std::span<const float> from, std::span<const float> to) {
    std::copy(from.begin(), from.end(), all->begin() + base(to));
  };
  copy(flat.token_embedding, out.legacy_weights.token_embedding);
  copy(flat.rms_final, out.legacy_weights.rms_final);
  if (!c.shared_classifier) copy(flat.wcls, out.legacy_weights.wcls);
  using Member = std::span<const float> LayerTensors::*;
  for (Member m :
       {&LayerTensors::rms_att, &LayerTensors::wv, &LayerTensors::wo, &LayerTensors::rms_ffn,
        &LayerTensors::w1, &LayerTensors::w2, &LayerTensors::w3}) {
    copy(flat.flat.*m, out.legacy_weights.flat.*m);
  }
  const int64_t hd = c.head_dim, dim = c.dim;
  for (Member m : {&LayerTensors::wq, &LayerTensors::wk}) {
    const std::span<const float> from = flat.flat.*m;
    float* to = all->data() + base(out.legacy_weights.flat.*m);
    const int64_t rows = static_cast<int64_t>(from.size()) / dim;
    for (int64_t r = 0; r < rows; ++r) {
      // Row j of a head in halves order is interleaved row 2j (first half) or
      // 2(j - hd/2) + 1 (second half).
      const int64_t head = r / hd, j = r % hd;
      const int64_t src = head * hd + (j < hd / 2 ? 2 * j : 2 * (j - hd / 2) + 1);
      std::copy_n(from.begin() + src * dim, dim, to + r * dim);
    }
  }
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
