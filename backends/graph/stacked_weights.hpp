// Per-layer stacked projections: wq, wk, wv as one [dim + 2 kv_dim, dim]
// matrix and w1, w3 as one [2 hidden_dim, dim], so each layer's projections
// are one pass over memory. Owned copies made once at prepare; the originals
// are not read again.
#pragma once

#include <vector>

#include "llama/config.hpp"
#include "llama/weights.hpp"

namespace llama::graph {

struct StackedLayer {
  std::vector<float> wqkv;  // f32 [dim + 2 kv_dim, dim]: rows of wq, then wk, then wv
  std::vector<float> w13;   // f32 [2 hidden_dim, dim]: rows of w1, then w3
};

// Layer `l` of `weights` (any layout); throws Error on a size mismatch.
StackedLayer stack_layer(const TransformerWeights& weights, const Config& config, int64_t l);

}  // namespace llama::graph
