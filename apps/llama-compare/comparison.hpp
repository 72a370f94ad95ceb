// llama-compare's measurement: generate with a baseline backend, feed the same
// token stream to every other backend and compare logits position by
// position, then let each generate freely and find where its stream departs.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "llama/backend.hpp"
#include "llama/generate.hpp"
#include "llama/tokenizers/tokenizer.hpp"

namespace llama::compare {

struct CompareSettings {
  std::string prompt;
  int64_t steps = 256;  // positions, prompt included; 0 or > seq_len means seq_len
  float temperature = 0.0f;
  float top_p = 0.9f;
  uint64_t seed = 1;
  // The model's stopping rule (OpenedCheckpoint::set_stopping): its EOS ids,
  // and whether run.c's sampled BOS ends the stream (llama2.c files).
  std::vector<int32_t> eos;
  bool stop_at_bos = true;
};

// One backend against the baseline. Positions are stream indices (BOS = 0).
struct BackendComparison {
  std::string backend;
  double max_abs = 0;  // largest |logit - baseline logit| over every position
  int64_t max_abs_position = -1;
  int64_t max_abs_token = -1;  // vocabulary index
  double max_rel = 0;          // largest per-position max_abs / max |baseline logit|
  int64_t max_rel_position = -1;
  int64_t argmax_mismatches = 0;            // positions whose argmax differs from the baseline's
  std::optional<int64_t> first_divergence;  // first differing token of free-running generation
  std::vector<int32_t> stream;              // its free-running stream

  bool ok(double tolerance) const { return !first_divergence && max_rel <= tolerance; }
};

struct Comparison {
  std::string baseline;
  std::vector<int32_t> stream;  // the baseline's tokens: BOS, prompt, generated
  int64_t prompt_tokens = 0;    // BOS included
  int64_t positions = 0;        // positions fed to every backend
  StopReason stop_reason = StopReason::steps;
  std::vector<BackendComparison> backends;  // every backend after the first

  bool ok(double tolerance) const;
};

// `backends[0]` is the baseline; needs at least two. Each backend is prepared
// (again) here with `model`. Throws llama::Error from the backends, or when a
// backend returns logits of the wrong size.
Comparison compare_backends(std::span<InferenceBackend* const> backends, const Model& model,
                            const Tokenizer& tokenizer, const CompareSettings& settings);

}  // namespace llama::compare
