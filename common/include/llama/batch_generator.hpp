// Generation for many requests on one backend: each request gets a sequence of the
// backend (forward_runs, docs/backends.md "Many sequences") and every step() runs one
// call for all of them, so the weights are read once per step whatever the load.
// Requests beyond the sequences wait in a bounded queue; a request reuses the
// longest prefix of its prompt a free sequence's cache already holds; a request
// ends at any time by cancel(). Each request samples with its own Sampler exactly
// as generate() does for one, so on a batch-invariant backend its tokens never
// depend on what else runs. generate() (and so llama-cli) runs through it with one
// request (through forward_runs where the backend claims batch invariance).
// docs/architecture.md, "The batched generator".
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "llama/backend.hpp"
#include "llama/logprobs.hpp"
#include "llama/sampler.hpp"
#include "llama/tokenizers/tokenizer.hpp"

namespace llama {

// Why a request ended. steps: its context (run.c's steps) has no position left.
enum class StopReason { steps, bos, eos, stop, max_tokens, cancelled };
const char* to_string(StopReason reason);

// A generated token's log-probability (llama/logprobs.hpp) with its text.
struct GeneratedLogprob {
  TokenLogprob value;
  std::string piece;                    // the token's text after the one before it
  std::vector<std::string> top_pieces;  // the alternatives' texts, as value.top
};

// Called with each piece of text the tokenizer's stream() gives (llama2.c:
// run.c's safe_printf filter; tokenizer.json: whole UTF-8 characters).
using PieceCallback = std::function<void(std::string_view piece)>;
// Called with the logprobs of generated tokens once their text is passed on (a
// server streaming logprobs with the text they belong to).
using LogprobsCallback = std::function<void(std::span<const GeneratedLogprob> logprobs)>;

struct SamplingSettings {
  float temperature = 0.0f;  // 0: greedy argmax
  float top_p = 0.9f;        // 0 or 1: the whole distribution
  uint64_t seed = 1;         // the request's own xorshift state (Sampler)
};

struct GenerationUsage {
  int64_t prompt_tokens = 0;         // the request's prompt
  int64_t cached_prompt_tokens = 0;  // of them, found in a sequence's cache and not run again
  int64_t completion_tokens = 0;     // generated (Completion::tokens)
};

struct GenerationTimings {
  double queued_ms = 0;          // from add() to getting a sequence
  double prompt_ms = 0;          // the backend calls that ran the prompt's chunks
  int64_t prompt_positions = 0;  // prompt tokens run (the prompt less the cached ones)
  double decode_ms = 0;          // from the prompt's logits to the end, sampling included
  int64_t decode_positions = 0;  // generated tokens run
};

// What a finished request produced.
struct Completion {
  uint64_t id = 0;
  StopReason stop_reason = StopReason::steps;
  std::string stop_text;  // the stop string that matched (stop_reason == stop)
  GenerationUsage usage;
  std::vector<int32_t> tokens;             // generated, without a final EOS or BOS
  std::vector<GeneratedLogprob> logprobs;  // one per generated token (logprobs >= 0)
  std::string text;                        // every piece passed to on_piece, joined
  GenerationTimings timings;
};

using FinishCallback = std::function<void(const Completion&)>;

struct GenerationRequest {
  std::vector<int32_t> prompt;  // encoded, non-empty (BOS first where the model wants it)
  SamplingSettings sampling;
  // When set, used instead of a Sampler made from `sampling` (generate(): the
  // caller's, whose RNG state then carries on); it must outlive the request.
  Sampler* sampler = nullptr;
  int64_t max_tokens = 0;         // at most this many generated tokens (0: no limit)
  std::vector<std::string> stop;  // text that ends generation, never passed on (StopMatcher)
  std::vector<int32_t> eos;       // ids that end generation when sampled (not kept)
  bool stop_at_bos = true;        // run.c's rule: a sampled BOS ends generation
  bool ignore_eos = false;        // neither an EOS id nor run.c's BOS ends generation
  int logprobs = -1;              // -1: none; 0..kMaxTopLogprobs alternatives per token
  // Positions the request may hold, prompt included (0: the generator's context);
  // the token sampled after the last of them is kept but never run (run.c's steps).
  // A longer prompt is refused, unless echo_prompt.
  int64_t context = 0;
  // run.c's printing: the prompt's pieces go to on_piece too, each forced token
  // after the position before it runs; with stop_at_bos a BOS forced after the first
  // token ends the request (StopReason::bos); and a prompt longer than `context` runs
  // its first `context` tokens, echoes the one after them and samples nothing
  // (StopReason::steps). Otherwise only generated text reaches on_piece.
  bool echo_prompt = false;
  PieceCallback on_piece;  // each piece of text as it completes
  // With logprobs >= 0: each generated token's logprob, in order, just before the
  // on_piece call that passes the last of its text on (text held back, a stop string
  // that may begin or a character not yet whole, holds its tokens back too), or at
  // the end for tokens whose text is empty. A token whose text a stop string cuts
  // off entirely is never passed; one cut partly is (its text before the stop went
  // out). A cancelled request's held-back tokens are not passed.
  LogprobsCallback on_logprobs;
  FinishCallback on_finish;  // once, when the request ends (cancel() included)
};

// How each step reaches the backend.
enum class StepCalls {
  // One forward_runs call for every request's tokens (the default).
  forward_runs,
  // One request at a time on sequence 0: forward_batch for the prompt, forward for
  // each generated token (forward_runs' logits may differ from forward's in the
  // last bits: docs/backends.md). generate() takes it on a backend that does not
  // claim batch invariance. Needs sequences == 1.
  forward,
};

struct BatchGeneratorOptions {
  int32_t sequences = 0;  // sequences used, at most backend.sequences() (0: all of them)
  int64_t context = 0;    // positions each sequence holds (0: config.seq_len; at most that)
  // Tokens per step: every decoding request's one token first, then prompt chunks,
  // oldest request first, in what is left (at least one prompt token a step, so
  // prompts advance even when decoding fills the budget).
  int64_t token_budget = 512;
  int64_t max_queue = 1024;  // requests waiting for a sequence; add() refuses beyond
  StepCalls calls = StepCalls::forward_runs;
};

// What one of the generator's sequences holds (a server's /slots).
struct SequenceState {
  uint64_t request = 0;   // the request holding it (0: free)
  int64_t cached = 0;     // positions its cache holds (a free one's kept for prefix reuse)
  int64_t generated = 0;  // tokens the holding request has generated so far
};

class BatchGenerator {
 public:
  // `backend` must have been prepared with a model of `config`; the generator
  // assumes nothing about what its sequences hold (it starts every sequence
  // over). Throws Error on bad options or a tokenizer larger than the model's
  // vocabulary. The backend and tokenizer must outlive the generator.
  BatchGenerator(InferenceBackend& backend, const Config& config, const Tokenizer& tokenizer,
                 const BatchGeneratorOptions& options = {});
  ~BatchGenerator();
  BatchGenerator(const BatchGenerator&) = delete;
  BatchGenerator& operator=(const BatchGenerator&) = delete;

  // Checks the request (Error with one line: an empty prompt, a token outside the
  // vocabulary, a prompt longer than its context, bad sampling settings, max_tokens,
  // logprobs or context, an empty stop string; or the queue full) and gives it a
  // free sequence or queues it. Returns its id (from 1).
  uint64_t add(GenerationRequest request);

  // Ends a queued or running request at once (StopReason::cancelled, its on_finish
  // called before this returns); its sequence becomes free. False when the id is
  // unknown or already finished.
  bool cancel(uint64_t id);

  // One backend call: each decoding request's next token, then prompt chunks
  // within the token budget; samples where a request's logits came back and
  // calls its callbacks. Returns whether requests remain (running or queued).
  // Callbacks may call add() and cancel(), not step(). A backend Error leaves
  // every request as it was (the same step may be tried again).
  bool step();

  // step() until no request remains.
  void run();

  int32_t sequences() const;
  std::vector<SequenceState> sequence_states() const;  // one per sequence, in order
  int64_t running() const;                             // requests holding a sequence
  int64_t queued() const;                              // requests waiting for one

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace llama
