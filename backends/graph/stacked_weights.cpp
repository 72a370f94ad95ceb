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
  const int64_t dim = c.dim, kv = c.kv_dim(), hidden = c.hidden_dim;
  return {checked_mul(checked_add(dim, checked_mul(2, kv, "wqkv"), "wqkv"), dim, "wqkv"),
          checked_mul(checked_mul(2, hidden, "w13"), dim, "w13"), checked_mul(dim, dim, "wo"),
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
                               const CopiedFn& copied)
    : storage_(static_cast<size_t>(floats(c))) {
  const Shapes s = shapes(c);
  const int64_t dim = c.dim, kv = c.kv_dim(), hidden = c.hidden_dim;
  CopyWriter<float> out(storage_.span(), copied);
  layers_.reserve(static_cast<size_t>(c.n_layers));
  for (int64_t l = 0; l < c.n_layers; ++l) {
    const LayerTensors t = weights.layer(c, l);
    StackedLayer copy;
    size_t start = out.used();
    out.append(t.wq, dim * dim, "wq");
    out.append(t.wk, kv * dim, "wk");
    out.append(t.wv, kv * dim, "wv");
    copy.wqkv = out.since(start);
    start = out.used();
    out.append(t.w1, hidden * dim, "w1");
    out.append(t.w3, hidden * dim, "w3");
    copy.w13 = out.since(start);
    start = out.used();
    out.append(t.wo, s.wo, "wo");
    copy.wo = out.since(start);
    start = out.used();
    out.append(t.w2, s.w2, "w2");
    copy.w2 = out.since(start);
    layers_.push_back(copy);
  }
  const size_t start = out.used();
  out.append(weights.wcls, s.wcls, "wcls");
  classifier_ = out.since(start);
}

}  // namespace llama::graph
