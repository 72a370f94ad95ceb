// Many sequences in one backend call (plugin protocol 6): a run is one sequence's
// tokens at consecutive positions, and a call takes runs of different sequences, so a
// backend can read each weight matrix once for all of them. SequenceLengths holds how
// many positions each sequence has run and refuses a call that breaks the contract
// (docs/backends.md, "Many sequences") before anything runs.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "llama/config.hpp"

namespace llama {

// Which of a run's positions get a row of logits back.
enum class RunLogits : uint8_t { none, last, all };

const char* to_string(RunLogits l);  // "none", "last", "all"

// One sequence's tokens at positions start_pos, start_pos + 1, ...
struct SequenceRun {
  int32_t sequence = 0;  // in [0, InferenceBackend::sequences())
  // At most the positions the sequence holds (no gaps); below them a rewind that
  // discards this sequence's cache from start_pos on, and no other sequence's.
  int64_t start_pos = 0;
  std::span<const int32_t> tokens;  // one or more
  RunLogits logits = RunLogits::last;
};

// Rows of logits a call returns: 0, 1 or tokens.size() per run, in run order.
int64_t logit_rows(std::span<const SequenceRun> runs);

// The positions each sequence holds, and the checks of a multi-sequence call.
class SequenceLengths {
 public:
  SequenceLengths() = default;
  // `sequences` in [1, kMaxSequences], `context` positions each (the config's seq_len
  // the backend runs); every sequence starts empty.
  SequenceLengths(int32_t sequences, int64_t context);

  static constexpr int32_t kMaxSequences = 4096;

  int32_t sequences() const { return static_cast<int32_t>(lengths_.size()); }
  int64_t context() const { return context_; }
  int64_t length(int32_t sequence) const { return lengths_.at(static_cast<size_t>(sequence)); }

  // Throws Error, prefixed "<who>: ", naming the run (its index and sequence) and what
  // is wrong, before anything changes: no runs, a sequence id outside [0, sequences),
  // a sequence in two runs of one call, a run without tokens, a start position below 0
  // or past the sequence's length (a gap), positions past the context, a token outside
  // [0, vocab_size).
  void check(std::span<const SequenceRun> runs, int64_t vocab_size, const std::string& who) const;
  // After a call ran: each run's sequence holds start_pos + tokens.size() positions.
  void apply(std::span<const SequenceRun> runs);
  // Every sequence empty again (prepare).
  void clear();

 private:
  std::vector<int64_t> lengths_;
  int64_t context_ = 0;
};

}  // namespace llama
