// GraphBackend::forward_runs: several sequences in one call. The runs' tokens
// fill the rows of the batch plans (kBatchTokens at a time, a run split across
// chunks where it does not fit), so each weight matrix streams from memory once
// per chunk for every sequence; each run's rows attend over its own sequence's
// cache; only the rows whose logits are wanted reach the classifier.
//
// Batch invariance: the batch plans run the batch kernels even for one row,
// and those give each row's result from that row alone (the f32 GEMM's
// column-order FMA chains, kernels/products/gemm_f32.hpp; the typed products'
// contract, kernels/dispatch/product_table.hpp); attend_queries gives each query
// from its own scores; rmsnorm, rope, swiglu and the residual adds are per row.
// So a sequence's bits depend neither on what shares its chunk nor on how its
// prompt was split.
#include <algorithm>
#include <cstring>

#include "graph_backend.hpp"
#include "llama/error.hpp"
#include "llama/kernels/dispatch/half_path.hpp"
#include "llama/kernels/numbers/dequantize.hpp"

namespace llama::graph {
namespace {

size_t sz(int64_t n) { return static_cast<size_t>(n); }

bool wanted(const SequenceRun& r, int64_t i) {
  return r.logits == RunLogits::all ||
         (r.logits == RunLogits::last && i + 1 == static_cast<int64_t>(r.tokens.size()));
}

}  // namespace

bool GraphBackend::batch_invariant() const {
  // amx-bf16x3's tile sums are not shown to be independent of the batch (no CPU
  // here to show it on): not claimed where bf16 products would take it.
  if (!prepared_ || numerics_ != Numerics::exact) return false;
  if (half_batch_path(BlockKind::bf16, best_kernel_set(), numerics_) != HalfPath::amx_bf16x3)
    return true;
  const auto bf16 = [](const MatrixCopy& m) { return m.tensor.dtype == DType::bf16; };
  if (bf16(copies_.classifier())) return false;
  for (int64_t l = 0; l < config_.n_layers; ++l) {
    const LayerCopy& w = copies_.layer(l);
    for (const MatrixCopy* m : {&w.wq, &w.wk, &w.wv, &w.wo, &w.w1, &w.w2, &w.w3})
      if (bf16(*m)) return false;
  }
  return true;
}

std::span<const float> GraphBackend::forward_runs(std::span<const SequenceRun> runs) {
  if (!prepared_) throw Error("graph: forward_runs called before prepare");
  const Config& c = config_;
  lengths_.check(runs, c.vocab_size, name());
  const auto vocab = sz(c.vocab_size);
  run_logits_.resize(sz(logit_rows(runs)) * vocab);
  size_t logit_row = 0;
  float* a3 = batch_.classifier_arena.data();

  // Chunks of at most kBatchTokens rows; (run, token) walks every run in order.
  size_t run = 0;
  int64_t token = 0;
  while (run < runs.size()) {
    segments_.clear();
    int64_t rows = 0;
    while (run < runs.size() && rows < kBatchTokens) {
      const SequenceRun& r = runs[run];
      const int64_t left = static_cast<int64_t>(r.tokens.size()) - token;
      const int64_t n = std::min(left, kBatchTokens - rows);
      segments_.push_back({r.sequence, rows, r.start_pos + token, n, &r});
      for (int64_t t = 0; t < n; ++t) {
        embedding_row(embedding_, r.tokens[sz(token + t)],
                      std::span(x_).subspan(sz((rows + t) * c.dim), sz(c.dim)));
      }
      rows += n;
      token += n;
      if (token == static_cast<int64_t>(r.tokens.size())) {
        ++run;
        token = 0;
      }
    }
    run_layers(batch_, rows, segments_);

    // The chunk's wanted rows, in run order, through the batch classifier.
    int64_t picked = 0;
    for (const Segment& s : segments_) {
      const SequenceRun& from = *s.from;
      for (int64_t t = 0; t < s.n; ++t) {
        if (!wanted(from, s.pos - from.start_pos + t)) continue;
        std::memcpy(a3 + batch_.cls_x.offset + picked * batch_.cls_x.ld,
                    x_.data() + (s.row + t) * c.dim, sz(c.dim) * sizeof(float));
        ++picked;
      }
    }
    if (picked == 0) continue;
    exec_.run(batch_.classifier, batch_.classifier_arena.span(), picked);
    for (int64_t i = 0; i < picked; ++i, ++logit_row) {
      std::memcpy(run_logits_.data() + logit_row * vocab,
                  a3 + batch_.logits.offset + i * batch_.logits.ld, vocab * sizeof(float));
    }
  }
  lengths_.apply(runs);
  return run_logits_;
}

}  // namespace llama::graph
