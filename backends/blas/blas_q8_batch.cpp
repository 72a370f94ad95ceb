// BlasBackend::forward_batch on Q8_0 weights: the prompt's activations are
// quantized row by row and every int8 weight row is read once for the whole
// batch (the core's q8_matmat_rows, rows split over threads); each (row,
// token) result is computed exactly as the one-token path computes it, so
// the logits equal forward's bit for bit.

#include "blas_backend.hpp"
#include "llama/kernels/math.hpp"
#include "llama/kernels/q8_math.hpp"
#include "llama/kernels/rope.hpp"

#include <algorithm>

namespace llama::blas {
namespace {

void grow(std::vector<float>& v, int64_t n) {
  if (v.size() < static_cast<size_t>(n)) v.resize(static_cast<size_t>(n));
}

void grow_q8(std::vector<Q8Vector>& v, int64_t n, int64_t width, int64_t group_size) {
  while (v.size() < static_cast<size_t>(n)) v.emplace_back().resize(width, group_size);
}

}  // namespace

void BlasBackend::q8_matmat(float* out, int64_t out_stride, const QuantizedTensor& w,
                            std::span<const Q8Vector> x) {
  const int64_t rows =
      static_cast<int64_t>(w.values.size()) / static_cast<int64_t>(x[0].values.size());
  const std::span<float> all(
      out, static_cast<size_t>((static_cast<int64_t>(x.size()) - 1) * out_stride + rows));
  // A few large blocks per thread (split_rows), not TBB's fine grain: the
  // batch kernel rearranges all the tokens on every call, which cost about
  // 40% of the product at 16 rows a call.
  const int64_t cols = static_cast<int64_t>(x[0].values.size());
  split_rows(rows, rows * cols * static_cast<int64_t>(x.size()), [&](int64_t r0, int64_t r1) {
    q8_matmat_rows(all, out_stride, w, x, r0, r1, q8_kernel_);
  });
}

std::span<const float> BlasBackend::forward_batch_q8(std::span<const int32_t> tokens,
                                                     int64_t start_pos, bool all_logits) {
  const Config& c = config_;
  const auto n = static_cast<int64_t>(tokens.size());
  const int64_t dim = c.dim, kv_dim = c.kv_dim(), hidden = c.hidden_dim, q_dim = c.q_dim();
  const int64_t gs = weights_.group_size, wide = std::max(dim, q_dim);
  grow(bx_, n * dim);
  grow(bxb_, n * wide);
  grow(bq_, n * wide);
  grow(bh1_, n * hidden);
  grow(bh3_, n * hidden);
  grow_q8(bxq_, n, dim, gs);
  grow_q8(baq_, n, q_dim, gs);
  grow_q8(bhq_, n, hidden, gs);
  const std::span<const Q8Vector> xq(bxq_.data(), static_cast<size_t>(n));
  const std::span<const Q8Vector> aq(baq_.data(), static_cast<size_t>(n));
  const std::span<const Q8Vector> hq(bhq_.data(), static_cast<size_t>(n));
  auto row = [](std::vector<float>& v, int64_t i, int64_t width) {
    return std::span<float>(v.data() + i * width, static_cast<size_t>(width));
  };
  auto quantize_rows = [&](std::vector<float>& v, int64_t width, std::vector<Q8Vector>& q) {
    for (int64_t i = 0; i < n; ++i) quantize_activations(row(v, i, width), q[size_t(i)]);
  };
  auto add_rows = [&](std::vector<float>& from) {
    for (int64_t i = 0; i < n * dim; ++i) bx_[size_t(i)] += from[size_t(i)];
  };

  for (int64_t i = 0; i < n; ++i) {
    const auto emb = weights_.token_embedding.subspan(
        static_cast<size_t>(tokens[static_cast<size_t>(i)] * dim), static_cast<size_t>(dim));
    std::copy(emb.begin(), emb.end(), bx_.begin() + i * dim);
  }
  for (int64_t l = 0; l < c.n_layers; ++l) {
    const LayerTensors norms = weights_.layer(c, l);
    const QuantizedLayerTensors w = weights_.quantized_layer(c, l);
    for (int64_t i = 0; i < n; ++i)
      q8::rmsnorm(row(bxb_, i, dim), row(bx_, i, dim), norms.rms_att, eps_);
    quantize_rows(bxb_, dim, bxq_);

    // Keys and values land straight in the cache rows of their positions.
    const size_t cache_off = static_cast<size_t>((l * c.seq_len + start_pos) * kv_dim);
    float* k = key_cache_.data() + cache_off;
    float* v = val_cache_.data() + cache_off;
    q8_matmat(bq_.data(), q_dim, w.wq, xq);
    q8_matmat(k, kv_dim, w.wk, xq);
    q8_matmat(v, kv_dim, w.wv, xq);
    for (int64_t i = 0; i < n; ++i) {
      rope_.angles(start_pos + i, rope_cos_, rope_sin_);
      q8::rope_rotate(row(bq_, i, q_dim), rope_, rope_cos_, rope_sin_);
      q8::rope_rotate(std::span<float>(k + i * kv_dim, static_cast<size_t>(kv_dim)), rope_,
                      rope_cos_, rope_sin_);
    }

    batch_attention(l, start_pos, n, q8::attend_head);
    quantize_rows(bxb_, q_dim, baq_);      // the attention output, rows of q_dim
    q8_matmat(bq_.data(), dim, w.wo, aq);  // q is spent: it takes the output
    add_rows(bq_);

    for (int64_t i = 0; i < n; ++i)
      q8::rmsnorm(row(bxb_, i, dim), row(bx_, i, dim), norms.rms_ffn, eps_);
    quantize_rows(bxb_, dim, bxq_);
    q8_matmat(bh1_.data(), hidden, w.w1, xq);
    q8_matmat(bh3_.data(), hidden, w.w3, xq);
    swiglu(std::span(bh1_).first(static_cast<size_t>(n * hidden)),
           std::span<const float>(bh3_).first(static_cast<size_t>(n * hidden)));
    quantize_rows(bh1_, hidden, bhq_);
    q8_matmat(bxb_.data(), dim, w.w2, hq);
    add_rows(bxb_);
  }

  // Only the positions whose logits are wanted go through the classifier.
  const int64_t first = all_logits ? 0 : n - 1;
  for (int64_t i = first; i < n; ++i) {
    q8::rmsnorm(row(bx_, i, dim), row(bx_, i, dim), weights_.rms_final, eps_);
    quantize_activations(row(bx_, i, dim), bxq_[size_t(i)]);
  }
  const std::span<const Q8Vector> wanted = xq.subspan(static_cast<size_t>(first));
  if (!all_logits) {
    q8_matmat(logits_.data(), c.vocab_size, weights_.q_wcls, wanted);
    return logits_;
  }
  batch_logits_.resize(static_cast<size_t>(n * c.vocab_size));
  q8_matmat(batch_logits_.data(), c.vocab_size, weights_.q_wcls, wanted);
  return batch_logits_;
}

}  // namespace llama::blas
