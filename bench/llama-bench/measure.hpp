// One configuration (checkpoint x backend x threads), measured inside a
// child process so its load time and peak RSS are its own.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace llama::bench {

struct RunSpec {
  std::string checkpoint;
  std::string backend;
  int threads = 1;
  int64_t prompt_tokens = 0;
  int64_t decode_tokens = 0;
  int64_t depth = 0;  // 0: no decode at depth
  int64_t repetitions = 1;
  int64_t warmup = 1;
  std::string numerics = "exact";    // BackendOptions::numerics (checked by the parent)
  std::string kv_cache = "default";  // BackendOptions::kv_cache (checked by the parent)
  int64_t parallel = 0;              // > 0: run_parallel's workload with this many sequences
};

// Loads, prepares and runs `spec`: per repetition one prefill of
// prompt_tokens through forward_batch, one decode of decode_tokens from
// position 0 and, with a depth, one decode after filling `depth` positions.
// Returns the raw samples: load_ms, first_token_ms, prefill_ms[reps],
// decode_ms[reps][decode_tokens], depth_ms[reps][decode_tokens],
// peak_rss_bytes (VmHWM), logits_finite, backend_name. Throws Error.
nlohmann::json run_configuration(const RunSpec& spec);

// The many-sequence workload (parallel_measure.cpp): a backend holding spec.parallel
// sequences of prompt_tokens + decode_tokens positions; per repetition every sequence's
// own prompt in one forward_runs call, then decode_tokens steps of one forward_runs
// call each, a token per sequence (its argmax fed back). Returns load_ms,
// prefill_ms[reps], decode_ms[reps][decode_tokens] (per step), peak_rss_bytes,
// logits_finite, batch_invariant, context, backend_name. Throws Error.
nlohmann::json run_parallel(const RunSpec& spec);

}  // namespace llama::bench
