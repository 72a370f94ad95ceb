// The conformance checks, as functions that report instead of asserting, so
// the suite can require them to pass on a backend and a self-test can show
// they catch a broken one. Backends are named by registry spec ("blas",
// "counting:graph"); "reference" is the oracle.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "llama/model.hpp"

namespace llama::conformance {

// Largest logit difference allowed, relative to the largest |reference logit|.
inline constexpr double kTolerance = 1e-4;

struct CheckResult {
  bool ok = true;
  std::string failure;  // the first failure, for the test's message

  void fail(const std::string& why) {
    if (ok) failure = why;
    ok = false;
  }
};

// A small model shape to write as a random checkpoint.
struct Shape {
  std::string name;             // e.g. "grouped-query"
  std::vector<int32_t> header;  // dim, hidden, layers, heads, kv heads, vocab (< 0: separate
                                // classifier), seq_len
};
// Multi-head, grouped-query, multi-query, separate classifier and odd sizes.
std::vector<Shape> generated_shapes();
// Writes a checkpoint of `shape` with seeded random weights to a temp file; returns its path.
std::string write_random_checkpoint(const Shape& shape, uint64_t seed);

// `count` tokens starting with BOS, spread over the vocabulary.
std::vector<int32_t> test_tokens(const Config& config, int64_t count);

// Logits at every position of `tokens` (positions 0, 1, ...) against the
// reference backend, all finite.
CheckResult check_logits_match_reference(const std::string& spec, const Model& model,
                                         std::span<const int32_t> tokens);
// One case of parity.json (fp32, run.c) or parity-q8.json (Q8_0, runq.c)
// generated on the backend: the reference stream token for token, and the stop reason.
CheckResult check_reference_stream(const std::string& spec, const nlohmann::json& parity_case);
// prepare(first), run, prepare(second), run, prepare(first), run: each run
// equals a fresh backend's.
CheckResult check_prepare_twice(const std::string& spec, const Model& first, const Model& second);
// forward_batch (all logits, last logits, from a later start position)
// against one forward per position.
CheckResult check_batch_matches_sequential(const std::string& spec, const Model& model);
// Positions up to seq_len - 1 run; seq_len, a batch crossing it, and tokens
// outside the vocabulary are llama::Error; the backend is usable after them.
CheckResult check_seq_len_bound(const std::string& spec, const Model& model);
// 1 thread and 2 threads give the same logits.
CheckResult check_threads_agree(const std::string& spec, const Model& model);
// `model` (interleaved rotation pairs) and test::with_halves_layout(model)
// (q/k rows for rotate_half) give the same logits on the backend within
// kLayoutTolerance: only the order of the attention dot products differs.
inline constexpr double kLayoutTolerance = 1e-5;
CheckResult check_rotation_layouts_agree(const std::string& spec, const Model& model);

}  // namespace llama::conformance
