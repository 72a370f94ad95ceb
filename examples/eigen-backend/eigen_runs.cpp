// EigenBackend::forward_runs: one step for several sequences. The tokens of every run
// form one activation matrix, so each weight matrix streams from memory once per call
// whatever the number of sequences; each run's keys and values go into its own
// sequence's cache and its queries attend over that cache alone; only the rows whose
// logits are wanted reach the classifier.
//
// Not batch invariant: Eigen's matrix-matrix product picks its blocking and its kernels
// by the product's shape (a one-row product runs as a matrix-vector product, a larger
// one in register panels whose kind depends on where a row falls), so a row's sums may
// differ in the last bits with the rows that share the call. batch_invariant() says
// false; llama-conformance's sequences/mixed holds the logits to its 1e-4 tolerance.
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

bool wanted(const llama::SequenceRun& r, size_t t) {
  return r.logits == llama::RunLogits::all ||
         (r.logits == llama::RunLogits::last && t + 1 == r.tokens.size());
}

}  // namespace

std::span<const float> EigenBackend::forward_runs(std::span<const llama::SequenceRun> runs) {
  if (!prepared_) throw llama::Error("eigen: forward_runs called before prepare");
  const llama::Config& c = config_;
  // Sequence ids, gaps, the context, tokens: a refused call changes nothing.
  lengths_.check(runs, c.vocab_size, name());
  const int64_t dim = c.dim, kv_dim = c.kv_dim(), hidden = c.hidden_dim, q_dim = c.q_dim();
  int64_t n = 0;
  for (const llama::SequenceRun& r : runs) n += static_cast<int64_t>(r.tokens.size());
  reserve_batch(n);
  grow(bk_, n * kv_dim);
  grow(bv_, n * kv_dim);
  auto row = [](std::vector<float>& v, int64_t i, int64_t w) {
    return std::span<float>(v.data() + i * w, sz(w));
  };
  // body(i, run, t) for row i of the activation matrix: token t of `run`.
  auto each_row = [&](auto body) {
    int64_t i = 0;
    for (const llama::SequenceRun& r : runs) {
      for (size_t t = 0; t < r.tokens.size(); ++t) body(i++, r, t);
    }
  };

  each_row([&](int64_t i, const llama::SequenceRun& r, size_t t) {
    std::copy_n(embedding_.begin() + r.tokens[t] * dim, dim, bx_.begin() + i * dim);
  });
  for (int64_t l = 0; l < c.n_layers; ++l) {
    const Layer& w = layers_[sz(l)];
    for (int64_t i = 0; i < n; ++i) {
      llama::rmsnorm(row(bxb_, i, dim), row(bx_, i, dim), w.attention_norm, eps_);
    }
    matmul(bq_.data(), q_dim, bxb_.data(), w.wq, n);
    matmul(bk_.data(), kv_dim, bxb_.data(), w.wk, n);
    matmul(bv_.data(), kv_dim, bxb_.data(), w.wv, n);
    each_row([&](int64_t i, const llama::SequenceRun& r, size_t t) {
      rope_.angles(r.start_pos + static_cast<int64_t>(t), cos_, sin_);  // the row's position
      llama::rope_rotate(row(bq_, i, q_dim), rope_, cos_, sin_);
      llama::rope_rotate(row(bk_, i, kv_dim), rope_, cos_, sin_);
    });
    // Each run's keys and values into its sequence's cache, then its attention over it.
    int64_t first = 0;
    for (const llama::SequenceRun& r : runs) {
      const auto m = static_cast<int64_t>(r.tokens.size());
      llama::KvCache& cache = caches_[sz(r.sequence)];
      cache.store(l, r.start_pos, m, &bk_[sz(first * kv_dim)], &bv_[sz(first * kv_dim)], kv_dim);
      attention(cache, l, r.start_pos, m, &bq_[sz(first * q_dim)], &bxb_[sz(first * q_dim)]);
      first += m;
    }
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

  // The wanted rows, normed, through the classifier as one product, in run order.
  const int64_t rows = llama::logit_rows(runs);
  grow(wanted_, rows * dim);
  int64_t k = 0;
  each_row([&](int64_t i, const llama::SequenceRun& r, size_t t) {
    if (wanted(r, t)) llama::rmsnorm(row(wanted_, k++, dim), row(bx_, i, dim), final_norm_, eps_);
  });
  run_logits_.resize(sz(rows * c.vocab_size));
  if (rows > 0) matmul(run_logits_.data(), c.vocab_size, wanted_.data(), classifier_, rows);
  lengths_.apply(runs);
  return run_logits_;
}

}  // namespace eigen_backend
