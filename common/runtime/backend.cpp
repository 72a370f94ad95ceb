// The default forward_batch and forward_runs, and the checks every backend shares.
#include "llama/backend.hpp"

#include <algorithm>

#include "llama/error.hpp"
#include "llama/memory_budget.hpp"
#include "llama/weights.hpp"

namespace llama {

std::span<const float> InferenceBackend::forward_batch(std::span<const int32_t> tokens,
                                                       int64_t start_pos, bool all_logits) {
  if (tokens.empty()) throw Error(name() + ": forward_batch needs at least one token");
  std::span<const float> logits;
  if (all_logits) batch_logits_.clear();
  for (size_t i = 0; i < tokens.size(); ++i) {
    logits = forward(tokens[i], start_pos + static_cast<int64_t>(i));
    if (all_logits) batch_logits_.insert(batch_logits_.end(), logits.begin(), logits.end());
  }
  if (all_logits) return batch_logits_;
  return logits;
}

std::span<const float> InferenceBackend::forward_runs(std::span<const SequenceRun> runs) {
  if (runs.empty()) throw Error(name() + ": forward_runs needs at least one run");
  for (size_t i = 0; i < runs.size(); ++i) {
    if (runs[i].sequence != 0) {
      throw Error(name() + ": run " + std::to_string(i) + " asks for sequence " +
                  std::to_string(runs[i].sequence) + " but this backend holds one (sequence 0)");
    }
    if (runs[i].tokens.empty()) throw Error(name() + ": run " + std::to_string(i) + ": no tokens");
  }
  // Rows are copied out as each run finishes: forward_batch's view ends at the next call.
  run_logits_.clear();
  for (const SequenceRun& r : runs) {
    const std::span<const float> out =
        forward_batch(r.tokens, r.start_pos, r.logits == RunLogits::all);
    if (r.logits != RunLogits::none) run_logits_.insert(run_logits_.end(), out.begin(), out.end());
  }
  return run_logits_;
}

void check_token_position(const Config& config, int32_t token, int64_t pos) {
  if (token < 0 || token >= config.vocab_size) {
    throw Error("token " + std::to_string(token) + " outside the vocabulary [0, " +
                std::to_string(config.vocab_size) + ")");
  }
  if (pos < 0 || pos >= config.seq_len) {
    throw Error("position " + std::to_string(pos) + " outside [0, seq_len " +
                std::to_string(config.seq_len) + ")");
  }
}

Admission admit(const Model& model, const InferenceBackend& backend,
                const BackendOptions& options) {
  require_dtypes(model.weights, backend.name(), backend.supported_dtypes());
  Admission a;
  a.kv = resolve_kv_cache(options.kv_cache, model);
  a.config = model.config;
  if (options.context < 0 || options.context > model.config.seq_len) {
    throw Error(backend.name() + ": a context of " + std::to_string(options.context) +
                " positions per sequence is outside [1, the model's seq_len " +
                std::to_string(model.config.seq_len) + "] (0: the model's)");
  }
  if (options.context > 0) a.config.seq_len = options.context;
  a.sequences = backend.sequences();
  if (a.sequences < 1 || a.sequences > SequenceLengths::kMaxSequences) {
    throw Error(backend.name() + ": " + std::to_string(a.sequences) + " sequences is outside [1, " +
                std::to_string(SequenceLengths::kMaxSequences) + "]");
  }
  require_run_state_memory(a.config, model.source, a.kv.dtype, a.sequences);
  a.run_state_bytes = run_state_bytes(a.config, a.kv.dtype, a.sequences);
  return a;
}

}  // namespace llama
