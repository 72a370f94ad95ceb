// SequenceLengths: the positions each sequence holds and the checks every
// multi-sequence call shares, made before anything runs so a refused call changes
// nothing.
#include "llama/sequence_runs.hpp"

#include <string>

#include "llama/error.hpp"

namespace llama {

const char* to_string(RunLogits l) {
  switch (l) {
    case RunLogits::none:
      return "none";
    case RunLogits::last:
      return "last";
    case RunLogits::all:
      return "all";
  }
  return "?";
}

int64_t logit_rows(std::span<const SequenceRun> runs) {
  int64_t rows = 0;
  for (const SequenceRun& r : runs) {
    if (r.logits == RunLogits::last) rows += 1;
    if (r.logits == RunLogits::all) rows += static_cast<int64_t>(r.tokens.size());
  }
  return rows;
}

SequenceLengths::SequenceLengths(int32_t sequences, int64_t context) : context_(context) {
  if (sequences < 1 || sequences > kMaxSequences) {
    throw Error("sequences must be in [1, " + std::to_string(kMaxSequences) + "], got " +
                std::to_string(sequences));
  }
  if (context < 1) throw Error("a sequence's context must hold at least one position");
  lengths_.assign(static_cast<size_t>(sequences), 0);
}

void SequenceLengths::check(std::span<const SequenceRun> runs, int64_t vocab_size,
                            const std::string& who) const {
  if (runs.empty()) throw Error(who + ": a call needs at least one run");
  std::vector<bool> seen(lengths_.size(), false);
  for (size_t i = 0; i < runs.size(); ++i) {
    const SequenceRun& r = runs[i];
    const std::string run =
        who + ": run " + std::to_string(i) + " (sequence " + std::to_string(r.sequence) + ")";
    if (r.sequence < 0 || r.sequence >= sequences()) {
      throw Error(run + ": no such sequence (this backend holds " + std::to_string(sequences()) +
                  ", ids 0 to " + std::to_string(sequences() - 1) + ")");
    }
    if (seen[static_cast<size_t>(r.sequence)]) {
      throw Error(run + ": the sequence has another run in this call (one run per sequence)");
    }
    seen[static_cast<size_t>(r.sequence)] = true;
    if (r.tokens.empty()) throw Error(run + ": no tokens");
    const int64_t held = lengths_[static_cast<size_t>(r.sequence)];
    if (r.start_pos < 0 || r.start_pos > held) {
      throw Error(run + ": start position " + std::to_string(r.start_pos) +
                  " leaves a gap: the sequence holds " + std::to_string(held) +
                  " positions (a run may start at any of 0 to " + std::to_string(held) + ")");
    }
    const auto n = static_cast<int64_t>(r.tokens.size());
    if (n > context_ - r.start_pos) {
      throw Error(run + ": positions " + std::to_string(r.start_pos) + " to " +
                  std::to_string(r.start_pos + n - 1) + " pass the context of " +
                  std::to_string(context_) + " positions per sequence");
    }
    for (size_t t = 0; t < r.tokens.size(); ++t) {
      if (r.tokens[t] < 0 || r.tokens[t] >= vocab_size) {
        throw Error(run + ": token " + std::to_string(r.tokens[t]) + " at position " +
                    std::to_string(r.start_pos + static_cast<int64_t>(t)) +
                    " outside the vocabulary [0, " + std::to_string(vocab_size) + ")");
      }
    }
  }
}

void SequenceLengths::apply(std::span<const SequenceRun> runs) {
  for (const SequenceRun& r : runs) {
    lengths_[static_cast<size_t>(r.sequence)] = r.start_pos + static_cast<int64_t>(r.tokens.size());
  }
}

void SequenceLengths::clear() { std::fill(lengths_.begin(), lengths_.end(), 0); }

}  // namespace llama
