// EigenBackend::forward_batch: the prompt as matrix-matrix products, so each weight
// matrix streams from memory once per batch instead of once per token; attention stays
// causal, each position over the cache up to itself.
#include <algorithm>

#include "eigen_backend.hpp"
#include "llama/error.hpp"
#include "llama/kernels/steps/run_c.hpp"

namespace eigen_backend {
namespace {

size_t sz(int64_t n) { return static_cast<size_t>(n); }

void grow(std::vector<float>& v, int64_t n) {
  if (v.size() < sz(n)) v.resize(sz(n));
}

}  // namespace

void EigenBackend::reserve_batch(int64_t n) {
  const llama::Config& c = config_;
  grow(bx_, n * c.dim);
  grow(bxb_, n * std::max(c.dim, c.q_dim()));
  grow(bq_, n * c.q_dim());
  grow(bh1_, n * c.hidden_dim);
  grow(bh3_, n * c.hidden_dim);
}

std::span<const float> EigenBackend::forward_batch(std::span<const int32_t> tokens,
                                                   int64_t start_pos, bool all_logits) {
  if (!prepared_) throw llama::Error("eigen: forward_batch called before prepare");
  if (tokens.empty()) throw llama::Error("eigen: forward_batch needs at least one token");
  const llama::Config& c = config_;
  const auto n = static_cast<int64_t>(tokens.size());
  for (int64_t i = 0; i < n; ++i) llama::check_token_position(c, tokens[sz(i)], start_pos + i);
  if (n == 1 && !all_logits) return forward(tokens[0], start_pos);
  const llama::SequenceRun ran{0, start_pos, tokens};  // sequence 0
  lengths_.apply(std::span(&ran, 1));

  const int64_t dim = c.dim, kv_dim = c.kv_dim(), hidden = c.hidden_dim, q_dim = c.q_dim();
  reserve_batch(n);
  if (kv_.dtype == llama::KvDType::f16) grow(kv_rows_, 2 * n * c.kv_dim());
  rows_start_ = start_pos;
  auto row = [](std::vector<float>& v, int64_t i, int64_t w) {
    return std::span<float>(v.data() + i * w, sz(w));
  };

  for (int64_t i = 0; i < n; ++i) {
    std::copy_n(embedding_.begin() + tokens[sz(i)] * dim, dim, bx_.begin() + i * dim);
  }
  for (int64_t l = 0; l < c.n_layers; ++l) {
    const Layer& w = layers_[sz(l)];
    for (int64_t i = 0; i < n; ++i) {
      llama::rmsnorm(row(bxb_, i, dim), row(bx_, i, dim), w.attention_norm, eps_);
    }
    // Keys and values land straight in the cache rows of their positions (an f16
    // cache: in kv_rows_, rounded in by store_rows).
    float* k = key_row(l, start_pos).data();
    float* v = value_row(l, start_pos).data();
    matmul(bq_.data(), q_dim, bxb_.data(), w.wq, n);
    matmul(k, kv_dim, bxb_.data(), w.wk, n);
    matmul(v, kv_dim, bxb_.data(), w.wv, n);
    for (int64_t i = 0; i < n; ++i) {
      rope_.angles(start_pos + i, cos_, sin_);
      llama::rope_rotate(row(bq_, i, q_dim), rope_, cos_, sin_);
      llama::rope_rotate(key_row(l, start_pos + i), rope_, cos_, sin_);
    }
    store_rows(l, start_pos, n);
    attention(caches_.front(), l, start_pos, n, bq_.data(), bxb_.data());  // bxb_: rows of q_dim
    matmul(bx_.data(), dim, bxb_.data(), w.wo, n, /*accumulate=*/true);

    for (int64_t i = 0; i < n; ++i) {
      llama::rmsnorm(row(bxb_, i, dim), row(bx_, i, dim), w.ffn_norm, eps_);
    }
    matmul(bh1_.data(), hidden, bxb_.data(), w.w1, n);
    matmul(bh3_.data(), hidden, bxb_.data(), w.w3, n);
    llama::swiglu(std::span(bh1_).first(sz(n * hidden)),
                  std::span<const float>(bh3_).first(sz(n * hidden)));
    matmul(bx_.data(), dim, bh1_.data(), w.w2, n, /*accumulate=*/true);
  }

  // Only the positions whose logits are wanted go through the classifier.
  const int64_t first = all_logits ? 0 : n - 1;
  for (int64_t i = first; i < n; ++i) {
    llama::rmsnorm(row(bx_, i, dim), row(bx_, i, dim), final_norm_, eps_);
  }
  if (!all_logits) {
    std::copy_n(bx_.begin() + first * dim, dim, x_.begin());
    matvec(logits_, classifier_, x_);
    return logits_;
  }
  batch_logits_.resize(sz(n * c.vocab_size));
  matmul(batch_logits_.data(), c.vocab_size, bx_.data(), classifier_, n);
  return batch_logits_;
}

}  // namespace eigen_backend
