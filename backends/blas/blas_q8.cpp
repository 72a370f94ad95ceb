// BlasBackend on Q8_0 weights: runq.c's forward pass. BLAS has no int8
// products, so each matrix-vector product quantizes its input per group and
// runs the core's int8 kernel (AVX-512 VNNI where available), rows split over
// the backend's threads. The f32 steps use runq.c's arithmetic (q8_math.hpp).
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "blas_backend.hpp"
#include "llama/kernels/math.hpp"
#include "llama/kernels/q8_math.hpp"
#include "llama/kernels/rope.hpp"

namespace llama::blas {

void BlasBackend::q8_matvec(std::span<float> y, const QuantizedTensor& w, const Q8Vector& x) {
  const auto rows = static_cast<int64_t>(y.size());
  const auto cols = static_cast<int64_t>(x.values.size());
  // Below this many weights a thread hand-off costs more than it saves.
  if (threads_ == 1 || rows * cols < (int64_t{1} << 16)) {
    q8_matvec_rows(y, w, x, 0, rows, q8_kernel_);
    return;
  }
  const int64_t grain = std::max<int64_t>(16, rows / (8 * threads_));
  arena_->execute([&] {
    tbb::parallel_for(
        tbb::blocked_range<int64_t>(0, rows, grain), [&](const tbb::blocked_range<int64_t>& r) {
          q8_matvec_rows(
              y.subspan(static_cast<size_t>(r.begin()), static_cast<size_t>(r.end() - r.begin())),
              w, x, r.begin(), r.end(), q8_kernel_);
        });
  });
}

std::span<const float> BlasBackend::forward_q8(int32_t token, int64_t pos) {
  const Config& c = config_;
  const int64_t dim = c.dim, kv_dim = c.kv_dim();
  const auto sz = [](int64_t n) { return static_cast<size_t>(n); };
  const std::span<float> xb = std::span(xb_).first(sz(dim));         // normed input
  const std::span<float> att = std::span(xb_).first(sz(c.q_dim()));  // attention output

  // The embedding table was dequantized at load, as runq.c does.
  std::copy_n(weights_.token_embedding.begin() + sz(token * dim), dim, x_.begin());
  rope_.angles(pos, rope_cos_, rope_sin_);

  for (int64_t l = 0; l < c.n_layers; ++l) {
    const LayerTensors norms = weights_.layer(c, l);
    const QuantizedLayerTensors w = weights_.quantized_layer(c, l);
    q8::rmsnorm(xb, x_, norms.rms_att, eps_);

    const size_t cache_off = sz((l * c.seq_len + pos) * kv_dim);
    std::span<float> k(key_cache_.data() + cache_off, sz(kv_dim));
    std::span<float> v(val_cache_.data() + cache_off, sz(kv_dim));
    quantize_activations(xb, xq_);
    q8_matvec(q_, w.wq, xq_);
    q8_matvec(k, w.wk, xq_);
    q8_matvec(v, w.wv, xq_);
    q8::rope_rotate(q_, rope_, rope_cos_, rope_sin_);
    q8::rope_rotate(k, rope_, rope_cos_, rope_sin_);

    attention(l, pos, q8::attend_head);
    quantize_activations(att, aq_);
    q8_matvec(xb2_, w.wo, aq_);
    for (int64_t i = 0; i < dim; ++i) x_[sz(i)] += xb2_[sz(i)];

    q8::rmsnorm(xb, x_, norms.rms_ffn, eps_);
    quantize_activations(xb, xq_);
    q8_matvec(hb_, w.w1, xq_);
    q8_matvec(hb2_, w.w3, xq_);
    swiglu(hb_, hb2_);
    quantize_activations(hb_, hq_);
    q8_matvec(xb, w.w2, hq_);
    for (int64_t i = 0; i < dim; ++i) x_[sz(i)] += xb[sz(i)];
  }
  q8::rmsnorm(x_, x_, weights_.rms_final, eps_);
  quantize_activations(x_, xq_);
  q8_matvec(logits_, weights_.q_wcls, xq_);
  return logits_;
}

}  // namespace llama::blas
