// ReplaySequences: the multi-sequence protocol on a single-sequence backend, by
// running a sequence's tokens again when it takes the one KV cache back.
#include "llama/replay_sequences.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "llama/checked_math.hpp"
#include "llama/error.hpp"
#include "llama/memory_budget.hpp"

namespace llama {
namespace {

class ReplaySequences final : public InferenceBackend {
 public:
  ReplaySequences(std::unique_ptr<InferenceBackend> inner, int32_t sequences, int64_t context)
      : inner_(std::move(inner)), sequences_(sequences), context_(context) {}

  std::string name() const override { return inner_->name(); }
  DTypeSet supported_dtypes() const override { return inner_->supported_dtypes(); }
  int32_t sequences() const override { return sequences_; }

  void prepare(const Model& model) override {
    prepared_ = false;
    // Every sequence's tokens may be held at once: refused before the inner backend
    // allocates anything when they cannot be.
    const int64_t positions = checked_mul(sequences_, inner_context(model), "replay");
    require_memory(checked_mul(positions, int64_t{sizeof(int32_t)}, "replay"),
                   "the tokens of " + std::to_string(sequences_) + " sequences of " +
                       std::to_string(inner_context(model)) + " positions (replay_sequences.hpp)",
                   available_memory(), model.source);
    inner_->prepare(model);
    config_ = model.config;
    lengths_ = SequenceLengths(sequences_, inner_context(model));
    tokens_.assign(static_cast<size_t>(sequences_), {});
    resident_ = -1;
    resident_tokens_.clear();
    prepared_ = true;
  }

  // Sequence 0, as for any backend: the single-sequence calls go through the runs.
  std::span<const float> forward(int32_t token, int64_t pos) override {
    const SequenceRun run{0, pos, std::span(&token, 1), RunLogits::last};
    return forward_runs(std::span(&run, 1));
  }
  std::span<const float> forward_batch(std::span<const int32_t> tokens, int64_t start_pos,
                                       bool all_logits) override {
    const SequenceRun run{0, start_pos, tokens, all_logits ? RunLogits::all : RunLogits::last};
    return forward_runs(std::span(&run, 1));
  }

  std::span<const float> forward_runs(std::span<const SequenceRun> runs) override {
    if (!prepared_) throw Error(name() + ": forward_runs called before prepare");
    lengths_.check(runs, config_.vocab_size, name());
    run_logits_.clear();
    std::vector<std::vector<int32_t>> next(runs.size());
    try {
      for (size_t i = 0; i < runs.size(); ++i) next[i] = run(runs[i]);
    } catch (...) {
      // What the inner cache holds is unknown now: the next run replays from 0.
      resident_ = -1;
      resident_tokens_.clear();
      throw;
    }
    for (size_t i = 0; i < runs.size(); ++i)
      tokens_[static_cast<size_t>(runs[i].sequence)] = std::move(next[i]);
    lengths_.apply(runs);
    return run_logits_;
  }

  std::string describe() const override {
    return inner_->describe() + "  sequences: " + std::to_string(sequences_) +
           ", run one after another on one KV cache: a sequence that takes the cache from"
           " another runs its tokens again from where the two part (replay_sequences.hpp)\n";
  }
  std::string report() const override {
    return name() + ": replayed " + std::to_string(replayed_) + " positions for " +
           std::to_string(switches_) + " switches between sequences\n" + inner_->report();
  }

 private:
  // Positions the inner backend holds: the model's seq_len, or fewer with a context.
  int64_t inner_context(const Model& model) const {
    return context_ > 0 ? context_ : model.config.seq_len;
  }

  // Runs one run on the inner backend (first, when another sequence holds the cache,
  // this sequence's tokens before start_pos from where they and the cache's part) and
  // returns the sequence's tokens after it.
  std::vector<int32_t> run(const SequenceRun& r) {
    const std::vector<int32_t>& held = tokens_[static_cast<size_t>(r.sequence)];
    std::vector<int32_t> next(held.begin(), held.begin() + r.start_pos);  // a rewind drops the rest
    if (resident_ != r.sequence) {
      const auto common = static_cast<int64_t>(
          std::mismatch(next.begin(), next.end(), resident_tokens_.begin(), resident_tokens_.end())
              .first -
          next.begin());
      resident_ = -1;  // until the replay has run
      if (common < r.start_pos) {
        inner_->forward_batch(std::span<const int32_t>(next).subspan(static_cast<size_t>(common)),
                              common, false);
        replayed_ += r.start_pos - common;
      }
      ++switches_;
    }
    const std::span<const float> logits =
        inner_->forward_batch(r.tokens, r.start_pos, r.logits == RunLogits::all);
    if (r.logits != RunLogits::none)
      run_logits_.insert(run_logits_.end(), logits.begin(), logits.end());
    next.insert(next.end(), r.tokens.begin(), r.tokens.end());
    resident_ = r.sequence;
    resident_tokens_ = next;
    return next;
  }

  std::unique_ptr<InferenceBackend> inner_;
  int32_t sequences_;
  int64_t context_;  // BackendOptions::context (0: the model's seq_len)
  bool prepared_ = false;
  Config config_;
  SequenceLengths lengths_;
  std::vector<std::vector<int32_t>> tokens_;  // each sequence's tokens at 0 .. length - 1
  int32_t resident_ = -1;                     // the sequence the inner cache holds
  std::vector<int32_t> resident_tokens_;      // the tokens it holds
  int64_t replayed_ = 0, switches_ = 0;
};

}  // namespace

std::unique_ptr<InferenceBackend> replay_sequences(std::unique_ptr<InferenceBackend> inner,
                                                   const BackendOptions& options) {
  if (inner->sequences() != 1) {
    throw Error(inner->name() + " holds " + std::to_string(inner->sequences()) +
                " sequences itself; replay is for a backend that holds one");
  }
  if (options.sequences < 1 || options.sequences > SequenceLengths::kMaxSequences) {
    throw Error("sequences must be in [1, " + std::to_string(SequenceLengths::kMaxSequences) +
                "], got " + std::to_string(options.sequences));
  }
  return std::make_unique<ReplaySequences>(std::move(inner), options.sequences, options.context);
}

}  // namespace llama
