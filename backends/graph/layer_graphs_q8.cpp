// The three graphs of a Q8_0 forward pass, runq.c's steps in its order: every
// product quantizes its f32 input per group first (one quantize shared by the
// products that read the same vector, as runq.c quantizes xb once for q, k, v),
// and RMSNorm sums squares in f32 FMAs. The int8 weights are the backend's
// copies (quantized_copies.hpp), not stacked.
#include "layer_graphs.hpp"

namespace llama::graph {

Graph attention_in_graph_q8(const Config& c, const LayerTensors& norms,
                            const QuantizedLayerTensors& w, int64_t group_size, int64_t tokens) {
  const int64_t dim = c.dim, kv = c.kv_dim(), q = c.q_dim();
  Graph g(tokens);
  const ValueId x = g.input("x", dim);
  const ValueId xn =
      g.rmsnorm_fma(x, g.weight_vector("rms_att", norms.rms_att), static_cast<float>(c.norm_eps));
  const ValueId xq = g.quantize(xn, group_size);
  g.output("q", g.matvec_q8(g.weight_q8("wq", w.wq, q, dim), xq));
  g.output("k", g.matvec_q8(g.weight_q8("wk", w.wk, kv, dim), xq));
  g.output("v", g.matvec_q8(g.weight_q8("wv", w.wv, kv, dim), xq));
  return g;
}

Graph feed_forward_graph_q8(const Config& c, const LayerTensors& norms,
                            const QuantizedLayerTensors& w, int64_t group_size, int64_t tokens) {
  const int64_t dim = c.dim, hidden = c.hidden_dim, q = c.q_dim();
  const auto eps = static_cast<float>(c.norm_eps);
  Graph g(tokens);
  const ValueId x = g.input("x", dim);
  const ValueId att = g.input("att", q);
  const ValueId x1 =
      g.add(x, g.matvec_q8(g.weight_q8("wo", w.wo, dim, q), g.quantize(att, group_size)));
  const ValueId xq =
      g.quantize(g.rmsnorm_fma(x1, g.weight_vector("rms_ffn", norms.rms_ffn), eps), group_size);
  const ValueId gate = g.matvec_q8(g.weight_q8("w1", w.w1, hidden, dim), xq);
  const ValueId up = g.matvec_q8(g.weight_q8("w3", w.w3, hidden, dim), xq);
  const ValueId hq = g.quantize(g.swiglu(gate, up), group_size);
  g.output("x", g.add(x1, g.matvec_q8(g.weight_q8("w2", w.w2, dim, hidden), hq)));
  return g;
}

Graph classifier_graph_q8(const Config& c, const TransformerWeights& w, const QuantizedTensor& wcls,
                          int64_t tokens) {
  Graph g(tokens);
  const ValueId x = g.input("x", c.dim);
  const ValueId xn =
      g.rmsnorm_fma(x, g.weight_vector("rms_final", w.rms_final), static_cast<float>(c.norm_eps));
  g.output("logits", g.matvec_q8(g.weight_q8("wcls", wcls, c.vocab_size, c.dim),
                                 g.quantize(xn, w.group_size)));
  return g;
}

}  // namespace llama::graph
