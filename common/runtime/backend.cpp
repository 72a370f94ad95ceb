// The default forward_batch and the checks every backend shares.
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

Admission admit(const Model& model, const InferenceBackend& backend, KvCacheOption kv_cache) {
  require_dtypes(model.weights, backend.name(), backend.supported_dtypes());
  Admission a;
  a.kv = resolve_kv_cache(kv_cache, model);
  require_run_state_memory(model, a.kv.dtype);
  a.run_state_bytes = run_state_bytes(model.config, a.kv.dtype);
  return a;
}

}  // namespace llama
