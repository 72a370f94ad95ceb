// BlasBackend::forward_runs: several sequences in one call. The tokens of every
// run form one activation matrix, so each weight matrix streams from memory once
// per call whatever the number of sequences; each run attends over its own
// sequence's cache; only the rows whose logits are wanted reach the classifier.
//
// Batch invariance: a row's products never depend on the other rows. The core's
// kernels give each (row, vector) result from that vector alone
// (kernels/dispatch/product_table.hpp), and so does the core's f32 GEMM, which
// exact f32 weights take in place of OpenBLAS's sgemm (whose sums change with
// the batch's shape); attend_queries and attend_token give each query from its
// own scores alone, the same bits; rmsnorm, rope and the residual adds are per
// row. forward_runs runs the batch kernels even for one row, so a sequence's
// bits do not change with how many rows share a call or how its prompt was
// chunked (batch_invariant()).
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>

#include "blas_backend.hpp"
#include "llama/cache_attention.hpp"
#include "llama/error.hpp"
#include "llama/kernels/dispatch/half_path.hpp"
#include "llama/kernels/numbers/dequantize.hpp"
#include "llama/kernels/steps/attend_token.hpp"
#include "llama/kernels/steps/f16_cache_attention.hpp"
#include "llama/kernels/steps/run_c.hpp"
#include "llama/kernels/steps/runq_c.hpp"
#include "openblas_runtime.hpp"

namespace llama::blas {
namespace {

size_t sz(int64_t n) { return static_cast<size_t>(n); }

bool wanted(const SequenceRun& r, size_t i) {
  return r.logits == RunLogits::all || (r.logits == RunLogits::last && i + 1 == r.tokens.size());
}

}  // namespace

bool BlasBackend::batch_invariant() const {
  if (!prepared_ || numerics_ != Numerics::exact) return false;
  // amx-bf16x3's tile sums are not shown to be independent of the batch (no CPU
  // here to show it on): not claimed.
  const auto holds = [&](const Matrix& m) {
    return !(m.tensor.dtype == DType::bf16 &&
             half_batch_path(BlockKind::bf16, kernel_, numerics_) == HalfPath::amx_bf16x3);
  };
  if (!holds(classifier_)) return false;
  for (const Layer& l : layers_) {
    for (const Matrix* m : {&l.wq, &l.wk, &l.wv, &l.wo, &l.w1, &l.w2, &l.w3})
      if (!holds(*m)) return false;
  }
  return true;
}

void BlasBackend::runs_attention(int64_t layer, std::span<const SequenceRun> runs) {
  const Config& c = config_;
  const int64_t hs = c.head_size(), q_dim = c.q_dim(), heads = c.n_heads;
  const bool f16 = kv_.dtype == KvDType::f16;
  const int64_t block = f16 ? kAttendF16Queries : q8::kAttendQueries;
  // Jobs: a lone query (a decode token) takes a group of heads at once through
  // attend_token, which walks its cache rows once for the group; a block of
  // queries one head. Each query's bits are its own either way
  // (steps/attend_token.hpp). The longest first.
  int64_t singles = 0;
  for (const SequenceRun& r : runs) singles += r.tokens.size() == 1 ? 1 : 0;
  const int64_t group =
      attend_token_group(heads, singles, threads_, run_scratch_floats_, c.seq_len);
  jobs_.clear();
  int64_t row = 0;
  for (size_t r = 0; r < runs.size(); ++r) {
    const auto n = static_cast<int64_t>(runs[r].tokens.size());
    for (int64_t i0 = 0; i0 < n; i0 += block) {
      const int64_t m = std::min(block, n - i0), pos = runs[r].start_pos + i0;
      const int64_t step = m == 1 ? group : 1;
      for (int64_t h = 0; h < heads; h += step)
        jobs_.push_back({int64_t(r), row + i0, pos, m, pos + m, h, std::min(heads, h + step)});
    }
    row += n;
  }
  std::stable_sort(jobs_.begin(), jobs_.end(), [](const AttentionJob& a, const AttentionJob& b) {
    return a.keys * a.m * (a.h1 - a.h0) > b.keys * b.m * (b.h1 - b.h0);
  });
  const auto per_thread = sz(run_scratch_floats_);
  const auto run_job = [&](int64_t k) {
    const AttentionJob& j = jobs_[sz(k)];
    const int slot = std::max(0, tbb::this_task_arena::current_thread_index());
    const std::span<float> scratch = run_scratch_.span().subspan(sz(slot) * per_thread, per_thread);
    KvCache& cache = caches_[sz(runs[sz(j.run)].sequence)];
    if (j.m == 1) {
      const TokenHeads t{bq_.data() + j.row * q_dim, j.h0, j.h1, c.kv_mul(), hs,
                         bxb_.data() + j.row * q_dim};
      attend_token_cached(steps_, t, cache, layer, j.keys, scratch);
      return;
    }
    const HeadQueries b{bq_.data() + j.row * q_dim,  q_dim, j.m, j.pos, j.h0, c.kv_mul(), hs,
                        bxb_.data() + j.row * q_dim, q_dim};
    attend_queries_cached(steps_, b, cache, layer, scratch);
  };
  const auto total = static_cast<int64_t>(jobs_.size());
  if (threads_ == 1 || total < 2) {
    for (int64_t k = 0; k < total; ++k) run_job(k);
    return;
  }
  arena_->execute([&] { tbb::parallel_for(int64_t{0}, total, run_job); });
}

std::span<const float> BlasBackend::forward_runs(std::span<const SequenceRun> runs) {
  if (!prepared_) throw Error("blas: forward_runs called before prepare");
  const Config& c = config_;
  lengths_.check(runs, c.vocab_size, name());
  openblas_set_threads(1);  // threads are ours: see blas_products.cpp
  const auto vocab = sz(c.vocab_size);
  run_logits_.resize(sz(logit_rows(runs)) * vocab);
  // Chunks of at most kRunsChunk tokens, a run split across chunks where it
  // does not fit (its pieces keep its order; only its last piece's logits when
  // it wants the last): the batch buffers stay the size of a chunk however
  // many sequences share the call. Rows are independent, so the split never
  // changes a bit.
  size_t logit_row = 0;
  int64_t rows = 0;
  pieces_.clear();
  const auto flush = [&] {
    if (pieces_.empty()) return;
    runs_chunk(pieces_, run_logits_.data() + logit_row * vocab);
    logit_row += sz(logit_rows(pieces_));
    pieces_.clear();
    rows = 0;
  };
  for (const SequenceRun& r : runs) {
    const auto total = static_cast<int64_t>(r.tokens.size());
    for (int64_t off = 0; off < total;) {
      const int64_t n = std::min(total - off, kRunsChunk - rows);
      const RunLogits logits =
          r.logits == RunLogits::last && off + n < total ? RunLogits::none : r.logits;
      pieces_.push_back({r.sequence, r.start_pos + off, r.tokens.subspan(sz(off), sz(n)), logits});
      off += n;
      rows += n;
      if (rows == kRunsChunk) flush();
    }
  }
  flush();
  lengths_.apply(runs);
  return run_logits_;
}

void BlasBackend::runs_chunk(std::span<const SequenceRun> runs, float* logits) {
  const Config& c = config_;
  int64_t n = 0;
  for (const SequenceRun& r : runs) n += static_cast<int64_t>(r.tokens.size());
  reserve_batch(n);
  row_pos_.resize(sz(n));

  const int64_t dim = c.dim, kv_dim = c.kv_dim(), q_dim = c.q_dim();
  const F32Gemm f32 = numerics_ == Numerics::exact ? F32Gemm::core : F32Gemm::sgemm;
  auto row = [&](std::vector<float>& v, int64_t i, int64_t width) {
    return std::span<float>(v.data() + i * width, sz(width));
  };
  {
    int64_t i = 0;
    for (const SequenceRun& r : runs) {
      for (size_t t = 0; t < r.tokens.size(); ++t, ++i) {
        row_pos_[sz(i)] = r.start_pos + int64_t(t);
        embedding_row(embedding_, r.tokens[t], row(bx_, i, dim));
      }
    }
  }

  for (int64_t l = 0; l < c.n_layers; ++l) {
    const Layer& w = layers_[sz(l)];
    for (int64_t i = 0; i < n; ++i)
      steps_.rmsnorm(row(bxb_, i, dim), row(bx_, i, dim), w.attention_norm, eps_);
    bin_.set(bxb_, dim, n, dim);
    product_batches(
        {{bq_.data(), q_dim, &w.wq}, {bk_.data(), kv_dim, &w.wk}, {bv_.data(), kv_dim, &w.wv}},
        bin_, n, f32);
    for (int64_t i = 0; i < n; ++i) {
      rope_.angles(row_pos_[sz(i)], rope_cos_, rope_sin_);
      steps_.rope_rotate(row(bq_, i, q_dim), rope_, rope_cos_, rope_sin_);
      steps_.rope_rotate(row(bk_, i, kv_dim), rope_, rope_cos_, rope_sin_);
    }
    // Each run's keys and values into its own sequence's cache.
    int64_t first = 0;
    for (const SequenceRun& r : runs) {
      const auto m = static_cast<int64_t>(r.tokens.size());
      caches_[sz(r.sequence)].store(l, r.start_pos, m, bk_.data() + first * kv_dim,
                                    bv_.data() + first * kv_dim, kv_dim);
      first += m;
    }

    runs_attention(l, runs);
    layer_tail(w, n, f32);
  }

  // The wanted rows, normed, through the classifier as one batch.
  const int64_t rows = logit_rows(runs);
  wanted_.resize(sz(std::max<int64_t>(rows, 1) * dim));
  {
    int64_t i = 0, k = 0;
    for (const SequenceRun& r : runs) {
      for (size_t t = 0; t < r.tokens.size(); ++t, ++i) {
        if (wanted(r, t))
          steps_.rmsnorm(row(wanted_, k++, dim), row(bx_, i, dim), final_norm_, eps_);
      }
    }
  }
  if (rows > 0) {
    bin_.set(wanted_, dim, rows, dim);
    product_batch(logits, c.vocab_size, classifier_, bin_, rows, false, f32);
  }
}

}  // namespace llama::blas
