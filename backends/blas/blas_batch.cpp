// BlasBackend::forward_batch: the prompt as matrix-matrix products (sgemm for
// f32 weights, the core's batch kernels for the others), so each weight
// matrix streams from memory once per batch instead of once per token;
// attention stays causal, split over (token, head) pairs. Every (row, token)
// result of the core's batch kernels equals the one-token product, so int8
// batch and token-by-token logits are bit-identical.
#include <cblas.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#include <algorithm>

#include "blas_backend.hpp"
#include "llama/cache_attention.hpp"
#include "llama/error.hpp"
#include "llama/kernels/numbers/dequantize.hpp"
#include "llama/kernels/products/bf16_batch.hpp"
#include "llama/kernels/steps/f16_cache_attention.hpp"
#include "llama/kernels/steps/run_c.hpp"
#include "llama/kernels/steps/runq_c.hpp"
#include "openblas_runtime.hpp"

namespace llama::blas {
namespace {

void grow(std::vector<float>& v, int64_t n) {
  if (v.size() < static_cast<size_t>(n)) v.resize(static_cast<size_t>(n));
}

}  // namespace

void BlasBackend::batch_attention(int64_t layer, int64_t start_pos, int64_t n) {
  const Config& c = config_;
  KvCache& cache_ = caches_.front();
  const int64_t hs = c.head_size(), q_dim = c.q_dim();
  const bool f16 = cache_.dtype() == KvDType::f16;
  const size_t scratch_floats = f16 ? attend_f16_scratch_floats(hs, start_pos + n, n)
                                    : attend_scratch_floats(hs, start_pos + n);
  tbb::enumerable_thread_specific<std::vector<float>> scratch(
      [&] { return std::vector<float>(scratch_floats); });
  // One job per (head, block of queries): the block's queries share each key
  // load (dispatch/step_table.hpp; steps/f16_cache_attention.hpp for an f16 cache).
  const int64_t block = f16 ? kAttendF16Queries : q8::kAttendQueries;
  const int64_t blocks = (n + block - 1) / block;
  arena_->execute([&] {
    tbb::parallel_for(int64_t{0}, blocks * c.n_heads, [&](int64_t job) {
      // Later blocks attend more positions: they go first.
      const int64_t b = blocks - 1 - job / c.n_heads, h = job % c.n_heads;
      const int64_t i0 = b * block, m = std::min(block, n - i0);
      // Queries and the attention output: rows of q_dim.
      const HeadQueries q{bq_.data() + i0 * q_dim,  q_dim, m, start_pos + i0, h, c.kv_mul(), hs,
                          bxb_.data() + i0 * q_dim, q_dim};
      attend_queries_cached(steps_, q, cache_, layer, scratch.local());
    });
  });
}

void BlasBackend::reserve_batch(int64_t n) {
  const Config& c = config_;
  const int64_t dim = c.dim, kv_dim = c.kv_dim(), hidden = c.hidden_dim, q_dim = c.q_dim();
  const int64_t wide = std::max(dim, q_dim);
  grow(bx_, n * dim);
  grow(bxb_, n * wide);
  grow(bq_, n * q_dim);
  grow(bh1_, n * hidden);
  grow(bh3_, n * hidden);
  // Keys and values before they are stored: an f16 cache's, and forward_runs' (its
  // rows go to several sequences' caches).
  grow(bk_, n * kv_dim);
  grow(bv_, n * kv_dim);
  if (n <= batch_capacity_) return;
  bin_.reserve(n, std::max(wide, hidden));
  // The rounded batch's storage, where some product reads it (product_batch).
  const auto rounds = [&](const Matrix& m) {
    return batch_rounds_to_bf16(m.tensor, kernel_, numerics_);
  };
  bool any_rounds = rounds(classifier_);
  for (const Layer& l : layers_) {
    for (const Matrix* m : {&l.wq, &l.wk, &l.wv, &l.wo, &l.w1, &l.w2, &l.w3})
      any_rounds = any_rounds || rounds(*m);
  }
  if (any_rounds) {
    bin_.reserve_bf16(n, std::max({wide, hidden, c.dim}), bf16_batch_layout(kernel_, numerics_));
  }
  grow(bsum_, n * dim);  // the core's wo and w2 sums before they join the residual
  batch_capacity_ = n;
}

void BlasBackend::layer_tail(const Layer& w, int64_t n, F32Gemm f32) {
  const Config& c = config_;
  const int64_t dim = c.dim, hidden = c.hidden_dim, q_dim = c.q_dim();
  auto row = [&](std::vector<float>& v, int64_t i, int64_t width) {
    return std::span<float>(v.data() + i * width, static_cast<size_t>(width));
  };
  bin_.set(bxb_, q_dim, n, q_dim);  // bxb_ holds the attention output, rows of q_dim
  product_batch(bx_.data(), dim, w.wo, bin_, n, true, f32);
  for (int64_t i = 0; i < n; ++i)
    steps_.rmsnorm(row(bxb_, i, dim), row(bx_, i, dim), w.ffn_norm, eps_);
  bin_.set(bxb_, dim, n, dim);
  product_batches({{bh1_.data(), hidden, &w.w1}, {bh3_.data(), hidden, &w.w3}}, bin_, n, f32);
  swiglu(std::span(bh1_).first(static_cast<size_t>(n * hidden)),
         std::span<const float>(bh3_).first(static_cast<size_t>(n * hidden)));
  bin_.set(bh1_, hidden, n, hidden);
  product_batch(bx_.data(), dim, w.w2, bin_, n, true, f32);
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

  const SequenceRun ran{0, start_pos, tokens, RunLogits::last};
  lengths_.apply(std::span(&ran, 1));

  openblas_set_threads(1);  // threads are ours: see blas_products.cpp
  const int64_t dim = c.dim, kv_dim = c.kv_dim(), q_dim = c.q_dim();
  reserve_batch(n);
  KvCache& cache_ = caches_.front();

  for (int64_t i = 0; i < n; ++i) {
    embedding_row(embedding_, tokens[static_cast<size_t>(i)],
                  std::span(bx_).subspan(static_cast<size_t>(i * dim), static_cast<size_t>(dim)));
  }
  auto row = [&](std::vector<float>& v, int64_t i, int64_t width) {
    return std::span<float>(v.data() + i * width, static_cast<size_t>(width));
  };

  for (int64_t l = 0; l < c.n_layers; ++l) {
    const Layer& w = layers_[static_cast<size_t>(l)];
    for (int64_t i = 0; i < n; ++i)
      steps_.rmsnorm(row(bxb_, i, dim), row(bx_, i, dim), w.attention_norm, eps_);

    // Keys and values land straight in the cache rows of their positions (an
    // f16 cache: in bk_/bv_, rounded into the cache after the rotation).
    const bool f16 = cache_.dtype() == KvDType::f16;
    float* k = f16 ? bk_.data() : cache_.keys_f32(l, start_pos);
    float* v = f16 ? bv_.data() : cache_.values_f32(l, start_pos);
    bin_.set(bxb_, dim, n, dim);
    product_batches({{bq_.data(), q_dim, &w.wq}, {k, kv_dim, &w.wk}, {v, kv_dim, &w.wv}}, bin_, n,
                    F32Gemm::sgemm);
    for (int64_t i = 0; i < n; ++i) {
      rope_.angles(start_pos + i, rope_cos_, rope_sin_);
      steps_.rope_rotate(row(bq_, i, q_dim), rope_, rope_cos_, rope_sin_);
      steps_.rope_rotate(std::span<float>(k + i * kv_dim, static_cast<size_t>(kv_dim)), rope_,
                         rope_cos_, rope_sin_);
    }
    if (f16) cache_.store(l, start_pos, n, k, v, kv_dim);

    batch_attention(l, start_pos, n);
    layer_tail(w, n, F32Gemm::sgemm);
  }

  // Only the positions whose logits are wanted go through the classifier.
  const int64_t first = all_logits ? 0 : n - 1;
  const int64_t rows = n - first;
  for (int64_t i = first; i < n; ++i)
    steps_.rmsnorm(row(bx_, i, dim), row(bx_, i, dim), final_norm_, eps_);
  if (!all_logits) {
    std::copy_n(bx_.begin() + first * dim, dim, x_.begin());
    in_.set(x_);
    product(logits_, classifier_, in_);
    return logits_;
  }
  batch_logits_.resize(static_cast<size_t>(rows * c.vocab_size));
  bin_.set(std::span<const float>(bx_).subspan(static_cast<size_t>(first * dim)), dim, rows, dim);
  product_batch(batch_logits_.data(), c.vocab_size, classifier_, bin_, rows, false, F32Gemm::sgemm);
  return batch_logits_;
}

}  // namespace llama::blas
