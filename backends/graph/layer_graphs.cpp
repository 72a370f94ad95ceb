// Building the per-layer graphs from any mix of f32 and typed weights.
#include "layer_graphs.hpp"

#include <tuple>
#include <utility>
#include <vector>

#include "llama/kernels/dispatch/half_path.hpp"

namespace llama::graph {
namespace {

// Adds products to a graph: an f32 matvec, or a typed one on its input in the
// format its dtype reads, quantized once per (input, format).
class Products {
 public:
  Products(Graph& g, Numerics numerics) : g_(g), numerics_(numerics) {}

  ValueId operator()(const std::string& name, const MatrixCopy& m, int64_t rows, int64_t cols,
                     ValueId x) {
    if (!m.typed()) return g_.matvec(g_.weight(name, m.f32, rows, cols), x);
    const InputFormat f = input_format(m.tensor, numerics_);
    ValueId in = f.quantized() ? quantized(x, f) : x;
    // A batch on a fast bf16 path reads x rounded to bf16, once for every
    // product of x (the compiler's default kernel decides, as it does there).
    if (g_.tokens() > 1 && batch_rounds_to_bf16(m.tensor, best_kernel_set(), numerics_)) {
      in = rounded(x);
    }
    return g_.matvec_typed(g_.weight_typed(name, m.tensor, numerics_), in);
  }

 private:
  ValueId rounded(ValueId x) {
    for (const auto& [value, r] : rounded_) {
      if (value == x) return r;
    }
    const ValueId r = g_.round_bf16(x);
    rounded_.emplace_back(x, r);
    return r;
  }

  ValueId quantized(ValueId x, const InputFormat& f) {
    for (const auto& [value, format, q] : quantized_) {
      if (value == x && format == f) return q;
    }
    const ValueId q = g_.quantize(x, f);
    quantized_.emplace_back(x, f, q);
    return q;
  }

  Graph& g_;
  Numerics numerics_;
  std::vector<std::tuple<ValueId, InputFormat, ValueId>> quantized_;
  std::vector<std::pair<ValueId, ValueId>> rounded_;  // f32 value, its round_bf16
};

ValueId norm(Graph& g, StepArithmetic a, ValueId x, const char* name, std::span<const float> w,
             const Config& c) {
  const auto eps = static_cast<float>(c.norm_eps);
  const ValueId gains = g.weight_vector(name, w);
  return a == StepArithmetic::runq_c ? g.rmsnorm_fma(x, gains, eps) : g.rmsnorm(x, gains, eps);
}

}  // namespace

Graph attention_in_graph(const Config& c, StepArithmetic a, std::span<const float> gains,
                         const LayerCopy& w, int64_t tokens, Numerics numerics) {
  const int64_t dim = c.dim, kv = c.kv_dim(), q = c.q_dim();
  Graph g(tokens);
  Products product(g, numerics);
  const ValueId x = g.input("x", dim);
  const ValueId xn = norm(g, a, x, "rms_att", gains, c);
  if (!w.wqkv.empty()) {  // one product, any dtype: its slices are q, k and v's bits
    const ValueId qkv = product("wqkv", w.wqkv, q + 2 * kv, dim, xn);
    g.output("q", g.slice(qkv, 0, q));
    g.output("k", g.slice(qkv, q, kv));
    g.output("v", g.slice(qkv, q + kv, kv));
    return g;
  }
  g.output("q", product("wq", w.wq, q, dim, xn));
  g.output("k", product("wk", w.wk, kv, dim, xn));
  g.output("v", product("wv", w.wv, kv, dim, xn));
  return g;
}

Graph feed_forward_graph(const Config& c, StepArithmetic a, std::span<const float> gains,
                         const LayerCopy& w, int64_t tokens, Numerics numerics) {
  const int64_t dim = c.dim, hidden = c.hidden_dim, q = c.q_dim();
  Graph g(tokens);
  Products product(g, numerics);
  const ValueId x = g.input("x", dim);
  const ValueId att = g.input("att", q);
  const ValueId x1 = g.add(x, product("wo", w.wo, dim, q, att));
  const ValueId xn = norm(g, a, x1, "rms_ffn", gains, c);
  ValueId gate = 0, up = 0;
  if (!w.w13.empty()) {
    const ValueId h = product("w13", w.w13, 2 * hidden, dim, xn);
    gate = g.slice(h, 0, hidden);
    up = g.slice(h, hidden, hidden);
  } else {
    gate = product("w1", w.w1, hidden, dim, xn);
    up = product("w3", w.w3, hidden, dim, xn);
  }
  const ValueId gated = g.swiglu(gate, up);
  g.output("x", g.add(x1, product("w2", w.w2, dim, hidden, gated)));
  return g;
}

Graph classifier_graph(const Config& c, StepArithmetic a, std::span<const float> gains,
                       const MatrixCopy& wcls, int64_t tokens, Numerics numerics) {
  Graph g(tokens);
  Products product(g, numerics);
  const ValueId x = g.input("x", c.dim);
  const ValueId xn = norm(g, a, x, "rms_final", gains, c);
  g.output("logits", product("wcls", wcls, c.vocab_size, c.dim, xn));
  return g;
}

}  // namespace llama::graph
