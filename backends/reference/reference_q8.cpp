// ReferenceBackend on Q8_0 weights: runq.c's forward pass read top to bottom.
// Every product quantizes its input per group (runq.c's quantize) and runs the
// core's portable int8 kernel; the f32 steps use runq.c's arithmetic (q8_math.hpp).
#include "llama/kernels/math.hpp"
#include "llama/kernels/q8_math.hpp"
#include "llama/kernels/rope.hpp"
#include "reference_backend.hpp"

namespace llama::reference {

std::span<const float> ReferenceBackend::forward_q8(int32_t token, int64_t pos) {
  const Config& c = config_;
  const int64_t dim = c.dim, kv_dim = c.kv_dim(), hs = c.head_size(), q_dim = c.q_dim();
  const auto eps = static_cast<float>(c.norm_eps);
  // out[rows] = W x for a Q8_0 matrix, x quantized into `xq` first.
  auto matmul = [](std::span<float> out, const QuantizedTensor& w, std::span<const float> x,
                   Q8Vector& xq) {
    quantize_activations(x, xq);
    q8_matvec_rows(out, w, xq, 0, int64_t(out.size()), Q8Kernel::portable);
  };
  const auto span = [](std::vector<float>& v, int64_t off, int64_t n) {
    return std::span<float>(v).subspan(size_t(off), size_t(n));
  };

  // 1. The token's row of the embedding table, dequantized at load as runq.c does.
  for (int64_t i = 0; i < dim; ++i)
    x_[size_t(i)] = weights_.token_embedding[size_t(token * dim + i)];
  rope_.angles(pos, rope_cos_, rope_sin_);

  for (int64_t l = 0; l < c.n_layers; ++l) {
    const LayerTensors& norms = weights_.layers[size_t(l)];
    const QuantizedLayerTensors& w = weights_.q_layers[size_t(l)];
    const int64_t layer_off = l * c.seq_len * kv_dim;
    const auto k = span(key_cache_, layer_off + pos * kv_dim, kv_dim);
    const auto v = span(val_cache_, layer_off + pos * kv_dim, kv_dim);

    // 2. Attention: normalize, project to q, k, v, rotate q and k.
    q8::rmsnorm(span(xb_, 0, dim), x_, norms.rms_att, eps);
    matmul(q_, w.wq, span(xb_, 0, dim), xq_);
    matmul(k, w.wk, span(xb_, 0, dim), xq_);
    matmul(v, w.wv, span(xb_, 0, dim), xq_);
    q8::rope_rotate(q_, rope_, rope_cos_, rope_sin_);
    q8::rope_rotate(k, rope_, rope_cos_, rope_sin_);

    // 3. Each query head attends over positions 0..pos of its kv head.
    for (int64_t h = 0; h < c.n_heads; ++h) {
      const int64_t kv_off = layer_off + (h / c.kv_mul()) * hs;
      q8::attend_head(span(q_, h * hs, hs), key_cache_.data() + kv_off, val_cache_.data() + kv_off,
                      kv_dim, pos + 1, att_, span(xb_, h * hs, hs));
    }

    // 4. Output projection and residual.
    matmul(tmp_, w.wo, span(xb_, 0, q_dim), aq_);
    for (int64_t i = 0; i < dim; ++i) x_[size_t(i)] += tmp_[size_t(i)];

    // 5. Feed-forward: w2(silu(w1 x) * w3 x) and residual.
    q8::rmsnorm(span(xb_, 0, dim), x_, norms.rms_ffn, eps);
    matmul(hb_, w.w1, span(xb_, 0, dim), xq_);
    matmul(hb2_, w.w3, span(xb_, 0, dim), xq_);
    swiglu(hb_, hb2_);
    matmul(span(tmp_, 0, dim), w.w2, hb_, hq_);
    for (int64_t i = 0; i < dim; ++i) x_[size_t(i)] += tmp_[size_t(i)];
  }

  // 6. Final norm and classifier.
  q8::rmsnorm(x_, x_, weights_.rms_final, eps);
  matmul(logits_, weights_.q_wcls, x_, xq_);
  return logits_;
}

}  // namespace llama::reference
