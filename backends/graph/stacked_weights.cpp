// Copying and stacking the weights into one huge-page block.
#include "stacked_weights.hpp"

#include "copy_writer.hpp"
#include "llama/checked_math.hpp"
#include "llama/error.hpp"

namespace llama::graph {
namespace {

struct Shapes {
  int64_t wqkv, w13, wo, w2, wcls;  // floats of each copy
};

Shapes shapes(const Config& c) {
  const int64_t dim = c.dim, kv = c.kv_dim(), hidden = c.hidden_dim, q = c.q_dim();
  return {checked_mul(checked_add(q, checked_mul(2, kv, "wqkv"), "wqkv"), dim, "wqkv"),
          checked_mul(checked_mul(2, hidden, "w13"), dim, "w13"), checked_mul(dim, q, "wo"),
          checked_mul(dim, hidden, "w2"), checked_mul(c.vocab_size, dim, "wcls")};
}

}  // namespace

int64_t StackedWeights::floats(const Config& c) {
  const Shapes s = shapes(c);
  const int64_t layer =
      checked_add(checked_add(s.wqkv, s.w13, "layer"), checked_add(s.wo, s.w2, "layer"), "layer");
  return checked_add(checked_mul(c.n_layers, layer, "stacked weights"), s.wcls, "stacked weights");
}

StackedWeights::StackedWeights(const TransformerWeights& weights, const Config& c,
                               const CopiedFn& copied, const PartsFn& run_parts)
    : storage_(static_cast<size_t>(floats(c))) {
  const Shapes s = shapes(c);
  const int64_t dim = c.dim, kv = c.kv_dim(), hidden = c.hidden_dim, q = c.q_dim();
  const auto n = static_cast<size_t>(c.n_layers);
  const auto at = [](int64_t v) { return static_cast<size_t>(v); };
  const size_t layer_floats = at(s.wqkv + s.w13 + s.wo + s.w2);  // fits: floats(c) checked it
  const std::span<float> all = storage_.span();
  layers_.resize(n);
  for (size_t l = 0; l < n; ++l) {
    const std::span<const float> layer = all.subspan(l * layer_floats, layer_floats);
    layers_[l] = {layer.subspan(0, at(s.wqkv)), layer.subspan(at(s.wqkv), at(s.w13)),
                  layer.subspan(at(s.wqkv + s.w13), at(s.wo)),
                  layer.subspan(at(s.wqkv + s.w13 + s.wo), at(s.w2))};
  }
  classifier_ = all.subspan(n * layer_floats, at(s.wcls));
  // Part 0 is the classifier, part 1 + l layer l, each filled in layout order.
  run_parts(c.n_layers + 1, [&](int64_t part) {
    if (part == 0) {
      CopyWriter<float> out(all.subspan(n * layer_floats, at(s.wcls)), copied);
      out.append(weights.wcls, s.wcls, "wcls");
      return;
    }
    const LayerTensors t = weights.layer(c, part - 1);
    CopyWriter<float> out(all.subspan(at(part - 1) * layer_floats, layer_floats), copied);
    out.append(t.wq, q * dim, "wq");
    out.append(t.wk, kv * dim, "wk");
    out.append(t.wv, kv * dim, "wv");
    out.append(t.w1, hidden * dim, "w1");
    out.append(t.w3, hidden * dim, "w3");
    out.append(t.wo, s.wo, "wo");
    out.append(t.w2, s.w2, "w2");
  });
}

}  // namespace llama::graph
