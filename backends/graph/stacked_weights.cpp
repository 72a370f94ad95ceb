// Stacking the per-layer projections into owned matrices.
#include "stacked_weights.hpp"

#include <algorithm>

#include "llama/checked_math.hpp"
#include "llama/error.hpp"

namespace llama::graph {
namespace {

void append(std::vector<float>& dst, std::span<const float> src, int64_t floats, const char* name) {
  if (src.size() != static_cast<size_t>(floats)) {
    throw Error(std::string("graph: ") + name + " holds " + std::to_string(src.size()) +
                " floats, expected " + std::to_string(floats));
  }
  dst.insert(dst.end(), src.begin(), src.end());
}

}  // namespace

StackedLayer stack_layer(const TransformerWeights& weights, const Config& c, int64_t l) {
  const int64_t dim = c.dim, kv = c.kv_dim(), hidden = c.hidden_dim;
  const int64_t qkv_floats =
      checked_mul(checked_add(dim, checked_mul(2, kv, "wqkv"), "wqkv"), dim, "wqkv");
  const int64_t w13_floats = checked_mul(checked_mul(2, hidden, "w13"), dim, "w13");
  const LayerTensors t = weights.layer(c, l);
  StackedLayer s;
  s.wqkv.reserve(static_cast<size_t>(qkv_floats));
  append(s.wqkv, t.wq, dim * dim, "wq");
  append(s.wqkv, t.wk, kv * dim, "wk");
  append(s.wqkv, t.wv, kv * dim, "wv");
  s.w13.reserve(static_cast<size_t>(w13_floats));
  append(s.w13, t.w1, hidden * dim, "w1");
  append(s.w13, t.w3, hidden * dim, "w3");
  return s;
}

}  // namespace llama::graph
