// Building the per-layer graphs.
#include "layer_graphs.hpp"

namespace llama::graph {

Graph attention_in_graph(const Config& c, const LayerTensors& w, const StackedLayer& s,
                         int64_t tokens) {
  const int64_t dim = c.dim, kv = c.kv_dim(), q = c.q_dim();
  const auto eps = static_cast<float>(c.norm_eps);
  Graph g(tokens);
  const ValueId x = g.input("x", dim);
  const ValueId xn = g.rmsnorm(x, g.weight_vector("rms_att", w.rms_att), eps);
  const ValueId qkv = g.matvec(g.weight("wqkv", s.wqkv, q + 2 * kv, dim), xn);
  g.output("q", g.slice(qkv, 0, q));
  g.output("k", g.slice(qkv, q, kv));
  g.output("v", g.slice(qkv, q + kv, kv));
  return g;
}

Graph feed_forward_graph(const Config& c, const LayerTensors& w, const StackedLayer& s,
                         int64_t tokens) {
  const int64_t dim = c.dim, hidden = c.hidden_dim, q = c.q_dim();
  const auto eps = static_cast<float>(c.norm_eps);
  Graph g(tokens);
  const ValueId x = g.input("x", dim);
  const ValueId att = g.input("att", q);
  const ValueId x1 = g.add(x, g.matvec(g.weight("wo", s.wo, dim, q), att));
  const ValueId xn = g.rmsnorm(x1, g.weight_vector("rms_ffn", w.rms_ffn), eps);
  const ValueId h = g.matvec(g.weight("w13", s.w13, 2 * hidden, dim), xn);
  const ValueId gate = g.slice(h, 0, hidden);
  const ValueId up = g.slice(h, hidden, hidden);
  const ValueId gated = g.swiglu(gate, up);
  const ValueId x2 = g.add(x1, g.matvec(g.weight("w2", s.w2, dim, hidden), gated));
  g.output("x", x2);
  return g;
}

Graph classifier_graph(const Config& c, const TransformerWeights& w, std::span<const float> wcls,
                       int64_t tokens) {
  Graph g(tokens);
  const ValueId x = g.input("x", c.dim);
  const ValueId xn =
      g.rmsnorm(x, g.weight_vector("rms_final", w.rms_final), static_cast<float>(c.norm_eps));
  g.output("logits", g.matvec(g.weight("wcls", wcls, c.vocab_size, c.dim), xn));
  return g;
}

}  // namespace llama::graph
