// The generation loop with run.c's semantics: the prompt (with the tokenizer's
// own special tokens, so BOS first for llama2.c) is forced, then tokens are
// sampled until `steps` positions or a sampled BOS; and the controls a user
// steers with: EOS ids, stop strings, a token budget, the context length, what
// to do with a prompt longer than it, and log-probabilities. It runs as one
// request of a BatchGenerator (llama/batch_generator.hpp): through forward_runs on
// a backend whose batch_invariant() holds, so its tokens are those the request
// gets beside any others; else through forward_batch and forward.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "llama/backend.hpp"
#include "llama/batch_generator.hpp"
#include "llama/logprobs.hpp"
#include "llama/prompt_fit.hpp"
#include "llama/sampler.hpp"
#include "llama/tokenizers/tokenizer.hpp"

namespace llama {

struct GenerationOptions {
  std::string prompt;
  int64_t steps = 256;        // positions, prompt included; 0 or > the context: the context
  bool parse_special = true;  // EncodeOptions::parse_special for the prompt
  // At most this many generated tokens (0: no limit beside `steps`).
  int64_t max_tokens = 0;
  // Generation ends as soon as the generated text contains one of these; the
  // text from it on is neither passed to on_piece nor kept (StopMatcher).
  std::vector<std::string> stop;
  // Ids that end generation when sampled (a model's EOS list; not kept).
  std::vector<int32_t> eos;
  // run.c's rule: a BOS (sampled, or forced inside the prompt) ends generation
  // (StopReason::bos). Hugging Face models turn it off, as transformers'
  // generate has no such rule: only their EOS ids (`eos`) stop them.
  bool stop_at_bos = true;
  // Neither a sampled EOS id nor run.c's sampled BOS ends generation.
  bool ignore_eos = false;
  // Positions available (0: config.seq_len; at most config.seq_len).
  int64_t context = 0;
  // A prompt longer than the context: refused, or cut (leaving half the
  // context, or max_tokens positions, to generate into).
  PromptTruncation truncation = PromptTruncation::refuse;
  // -1: none; 0..kMaxTopLogprobs: each generated token's log-probability and
  // that many most likely alternatives (GenerationResult::logprobs).
  int logprobs = -1;
};

struct GenerationResult {
  std::vector<int32_t> prompt_tokens;     // as encoded (BOS first where the tokenizer adds it)
  std::vector<int32_t> generated_tokens;  // sampled after the prompt, no final BOS
  StopReason stop_reason = StopReason::steps;
  std::string stop_text;                   // the stop string that matched (stop_reason == stop)
  int64_t prompt_dropped = 0;              // prompt tokens cut to fit the context (truncation)
  int64_t prompt_encoded = 0;              // the prompt's length as encoded, before any cut
  std::vector<GeneratedLogprob> logprobs;  // one per generated token (options.logprobs >= 0)
  std::string text;      // every printed piece (the tokenizer's stream()), prompt included,
                         // the generated part cut before a matched stop string
  double prompt_ms = 0;  // the call(s) over the prompt
  int64_t prompt_positions = 0;
  double decode_ms = 0;  // the calls after the prompt
  int64_t decode_positions = 0;

  double prompt_tok_per_s() const;
  double decode_tok_per_s() const;
};

// `backend` must have been prepared with a model of `config`; generation
// starts at position 0. Throws Error on bad options (max_tokens < 0, an empty
// stop string, logprobs out of range, context above seq_len) and on a prompt
// longer than the context when truncation is refuse.
GenerationResult generate(InferenceBackend& backend, const Config& config,
                          const Tokenizer& tokenizer, Sampler& sampler,
                          const GenerationOptions& options, const PieceCallback& on_piece = {});

}  // namespace llama
