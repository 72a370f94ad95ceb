// BlasBackend::forward_batch: the prompt as matrix-matrix products (sgemm),
// so each weight matrix streams from memory once per batch instead of once
// per token; attention stays causal, split over (token, head) pairs.
#include <cblas.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#include <algorithm>

#include "blas_backend.hpp"
#include "llama/error.hpp"
#include "llama/kernels/math.hpp"
#include "openblas_runtime.hpp"

namespace llama::blas {
namespace {

void grow(std::vector<float>& v, int64_t n) {
  if (v.size() < static_cast<size_t>(n)) v.resize(static_cast<size_t>(n));
}

}  // namespace

void BlasBackend::batch_attention(int64_t layer, int64_t start_pos, int64_t n,
                                  HeadAttention attend) {
  const Config& c = config_;
  const int64_t hs = c.head_size(), kv_dim = c.kv_dim(), q_dim = c.q_dim();
  const size_t layer_off = static_cast<size_t>(layer * c.seq_len * kv_dim);
  tbb::enumerable_thread_specific<std::vector<float>> scores(
      [&] { return std::vector<float>(static_cast<size_t>(c.seq_len)); });
  arena_->execute([&] {
    tbb::parallel_for(int64_t{0}, n * c.n_heads, [&](int64_t job) {
      const int64_t i = job / c.n_heads, h = job % c.n_heads;
      const size_t kv_off = layer_off + static_cast<size_t>((h / c.kv_mul()) * hs);
      // Queries and the attention output: rows of q_dim.
      const size_t q_off = static_cast<size_t>(i * q_dim + h * hs);
      attend(std::span<const float>(bq_).subspan(q_off, static_cast<size_t>(hs)),
             key_cache_.data() + kv_off, val_cache_.data() + kv_off, kv_dim, start_pos + i + 1,
             scores.local(), std::span(bxb_).subspan(q_off, static_cast<size_t>(hs)));
    });
  });
}

std::span<const float> BlasBackend::forward_batch(std::span<const int32_t> tokens,
                                                  int64_t start_pos, bool all_logits) {
  if (!prepared_) throw Error("blas: forward_batch called before prepare");
  if (tokens.empty()) throw Error("blas: forward_batch needs at least one token");
  const Config& c = config_;
  const auto n = static_cast<int64_t>(tokens.size());
  for (int64_t i = 0; i < n; ++i)
    check_token_position(c, tokens[static_cast<size_t>(i)], start_pos + i);
  if (n == 1 && !all_logits) return forward(tokens[0], start_pos);
  if (weights_.format == WeightFormat::q8_0) return forward_batch_q8(tokens, start_pos, all_logits);

  openblas_set_threads(1);  // threads are ours: see blas_products.cpp
  const int64_t dim = c.dim, kv_dim = c.kv_dim(), hidden = c.hidden_dim, q_dim = c.q_dim();
  const int64_t width = std::max(dim, q_dim);
  grow(bx_, n * dim);
  grow(bxb_, n * width);
  grow(bq_, n * width);
  grow(bh1_, n * hidden);
  grow(bh3_, n * hidden);

  for (int64_t i = 0; i < n; ++i) {
    const auto row = weights_.token_embedding.subspan(
        static_cast<size_t>(tokens[static_cast<size_t>(i)] * dim), static_cast<size_t>(dim));
    std::copy(row.begin(), row.end(), bx_.begin() + i * dim);
  }
  auto row = [&](std::vector<float>& v, int64_t i, int64_t width) {
    return std::span<float>(v.data() + i * width, static_cast<size_t>(width));
  };

  for (int64_t l = 0; l < c.n_layers; ++l) {
    const LayerTensors w = weights_.layer(c, l);
    for (int64_t i = 0; i < n; ++i) rmsnorm(row(bxb_, i, dim), row(bx_, i, dim), w.rms_att, eps_);

    // Keys and values land straight in the cache rows of their positions.
    const size_t cache_off = static_cast<size_t>((l * c.seq_len + start_pos) * kv_dim);
    float* k = key_cache_.data() + cache_off;
    float* v = val_cache_.data() + cache_off;
    matmul(bq_.data(), q_dim, bxb_.data(), w.wq, n, q_dim, dim);
    matmul(k, kv_dim, bxb_.data(), w.wk, n, kv_dim, dim);
    matmul(v, kv_dim, bxb_.data(), w.wv, n, kv_dim, dim);
    for (int64_t i = 0; i < n; ++i) {
      rope_.angles(start_pos + i, rope_cos_, rope_sin_);
      rope_rotate(row(bq_, i, q_dim), rope_, rope_cos_, rope_sin_);
      rope_rotate(std::span<float>(k + i * kv_dim, static_cast<size_t>(kv_dim)), rope_, rope_cos_,
                  rope_sin_);
    }

    batch_attention(l, start_pos, n, llama::attend_head);
    // bxb_ now holds the attention output, rows of q_dim.
    matmul(bx_.data(), dim, bxb_.data(), w.wo, n, dim, q_dim, /*beta=*/1.0f);

    for (int64_t i = 0; i < n; ++i) rmsnorm(row(bxb_, i, dim), row(bx_, i, dim), w.rms_ffn, eps_);
    matmul(bh1_.data(), hidden, bxb_.data(), w.w1, n, hidden, dim);
    matmul(bh3_.data(), hidden, bxb_.data(), w.w3, n, hidden, dim);
    swiglu(std::span(bh1_).first(static_cast<size_t>(n * hidden)),
           std::span<const float>(bh3_).first(static_cast<size_t>(n * hidden)));
    matmul(bx_.data(), dim, bh1_.data(), w.w2, n, dim, hidden, /*beta=*/1.0f);
  }

  // Only the positions whose logits are wanted go through the classifier.
  const int64_t first = all_logits ? 0 : n - 1;
  const int64_t rows = n - first;
  for (int64_t i = first; i < n; ++i)
    rmsnorm(row(bx_, i, dim), row(bx_, i, dim), weights_.rms_final, eps_);
  if (!all_logits) {
    std::copy_n(bx_.begin() + first * dim, dim, x_.begin());
    matvec(logits_, weights_.wcls, x_);
    return logits_;
  }
  batch_logits_.resize(static_cast<size_t>(rows * c.vocab_size));
  matmul(batch_logits_.data(), c.vocab_size, bx_.data(), weights_.wcls, rows, c.vocab_size, dim);
  return batch_logits_;
}

}  // namespace llama::blas
