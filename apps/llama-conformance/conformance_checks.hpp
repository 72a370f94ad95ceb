// The conformance checks, as functions that report instead of asserting: llama-conformance
// runs them on a backend spec ("blas", "counting:graph", a plugin's "eigen"), and the
// self-test shows each catches a deliberately broken wrapper. "reference" is the oracle.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string>

#include "llama/model.hpp"
#include "llama/tensor.hpp"

namespace llama::conformance {

class ConformanceData;

// Largest logit difference allowed, relative to the largest |reference logit|.
inline constexpr double kTolerance = 1e-4;

struct CheckResult {
  bool ok = true;
  std::string failure;  // the first failure, one line
  // Set by a check whose property the backend does not claim on any of its
  // models (why, one line): reported as not claimed instead of passed.
  std::string not_claimed;

  void fail(const std::string& why) {
    if (ok) failure = why;
    ok = false;
  }
};

// Logits at every position of `tokens` (positions 0, 1, ...) against the reference
// backend, all finite.
CheckResult check_logits_match_reference(const std::string& spec, const Model& model,
                                         std::span<const int32_t> tokens);
// One case of parity.json (fp32, run.c) or parity-q8.json (Q8_0, runq.c) generated on
// the backend: the recorded stream token for token, and the stop reason.
CheckResult check_reference_stream(const ConformanceData& data, const std::string& spec,
                                   const nlohmann::json& parity_case);
// prepare(first), run, prepare(first), run, prepare(second), run, prepare(first), run:
// each run equals a fresh backend's.
CheckResult check_prepare_twice(const std::string& spec, const Model& first, const Model& second);
// forward_batch (all logits, last logits, from a later start position) against one
// forward per position.
CheckResult check_batch_matches_sequential(const std::string& spec, const Model& model);
// A call at a position already run (a rewind, as ChatSession makes) discards the cache
// from there: after n positions of tokens a, forward back at n / 2 with other tokens b,
// forward_batch back at 1, forward again at n - 1 and forward_batch back at 0 each give a
// fresh backend's logits of b (n = min(16, seq_len)).
CheckResult check_rewind(const std::string& spec, const Model& model);
// Positions up to seq_len - 1 run; seq_len, a batch crossing it, tokens outside the
// vocabulary and forward before prepare are llama::Error; the backend is usable after.
CheckResult check_seq_len_bound(const std::string& spec, const Model& model);
// 1 thread and 2 threads give the same logits.
CheckResult check_threads_agree(const std::string& spec, const Model& model);
// `model` (interleaved rotation pairs) and with_halves_layout(model) (q/k rows for
// rotate_half) give the same logits on the backend within kLayoutTolerance: only the
// order of the attention dot products differs.
inline constexpr double kLayoutTolerance = 1e-5;
CheckResult check_rotation_layouts_agree(const std::string& spec, const Model& model);
// `f32_model` with its matrices and norms rounded to `dtype` (bf16 or f16,
// with_dtype) gives on the backend the logits of the f32 model of the same
// values (widened_to_f32) within kUpcastTolerance, forward and forward_batch:
// the numerics policy `exact` (llama/numerics.hpp) upcasts exactly and
// computes in f32, so only the summation order may differ (a backend reading
// bf16 in place sums in other lanes than its f32 engine). A backend that
// rounded activations, or computed in bf16, is an order of magnitude off.
inline constexpr double kUpcastTolerance = 1e-5;
CheckResult check_upcast_exact(const std::string& spec, const Model& f32_model, DType dtype);
// With an f16 KV cache asked for (BackendOptions::kv_cache), the logits of
// `tokens`, forward and forward_batch, match the reference backend's f16-cache
// logits within kF16KvTolerance, and are nearer them than the reference's f32
// cache logits are (a backend that kept f32 fails that). Looser than 1e-4: the
// f16 rounding of K, V and the probabilities turns a last-bit difference of
// two backends' f32 sums into a whole f16 step of one cached value
// (docs/formats.md, "The KV cache").
inline constexpr double kF16KvTolerance = 1e-3;
CheckResult check_f16_kv_matches_reference(const std::string& spec, const Model& model,
                                           std::span<const int32_t> tokens);

// Many sequences (plugin protocol 6, conformance_sequences.cpp), on a backend created
// with 4 sequences: the registry's replay where the backend holds one.
// A mixed schedule (prompt chunks of 1 to 7 tokens, sequences in rotating orders, some
// sitting out a step, logits all, last or none) gives each sequence the logits it gets
// alone on a fresh instance, within kTolerance.
CheckResult check_sequences_match_alone(const std::string& spec, const Model& model);
// The same schedule gives each sequence's rows bit for bit as the sequence alone as one
// run and alone one position per call: for a backend whose batch_invariant() is true.
CheckResult check_batch_invariant(const std::string& spec, const Model& model);
// After the schedule, sequence 1 goes back to position 3 with other tokens in the same
// call as the others' next tokens: every sequence still gets its alone logits.
CheckResult check_sequence_rewind(const std::string& spec, const Model& model);
// No runs, unknown ids, a run without tokens, a gap, a sequence twice, a bad token and
// positions past the context are llama::Error; the backend runs correctly afterwards.
CheckResult check_sequence_bad_calls(const std::string& spec, const Model& model);
// 4096 sequences of a 10,000,000-position context are refused at prepare with the one
// line of the memory check; 4096 of 16 positions run; a context past seq_len is refused.
CheckResult check_sequence_memory(const std::string& spec);

}  // namespace llama::conformance
