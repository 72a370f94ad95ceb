// Perplexity of a model on a token stream with llama.cpp's llama-perplexity
// semantics, so figures compare: consecutive whole chunks of `ctx` tokens (a
// partial last chunk dropped), each chunk's first token replaced by BOS, the
// chunk run through forward_batch with every position's logits, and for
// positions j = ctx/2 .. ctx-2 the negative log-likelihood of the chunk's
// token j+1 counted.
#pragma once

#include <cstdint>
#include <functional>
#include <span>

#include "llama/backend.hpp"
#include "llama/config.hpp"

namespace llama {

struct PerplexityOptions {
  int64_t ctx = 0;  // tokens per chunk; 0: the model's seq_len, at most 512
  int32_t bos = 1;  // each chunk's first token: the tokenizer's BOS (run.c's 1)
};

struct PerplexityResult {
  int64_t text_tokens = 0;  // the stream's length (BOS included)
  int64_t ctx = 0;
  int64_t chunks = 0;
  int64_t scored = 0;            // tokens whose likelihood was counted
  double mean_nll = 0;           // natural log
  double nll_stderr = 0;         // standard error of mean_nll
  double perplexity = 0;         // exp(mean_nll)
  double perplexity_stderr = 0;  // perplexity * nll_stderr, as llama.cpp reports it
  double seconds = 0;            // forward_batch time
  double tokens_per_s() const;   // chunk tokens run per second
};

// Called after each chunk with the chunks done, the total, and the perplexity so far.
using PerplexityProgress = std::function<void(int64_t done, int64_t chunks, double perplexity)>;

// `tokens` is the encoded text (BOS first); `backend` must have been prepared
// with a model of `config`. Throws Error when ctx is below 2 or above
// seq_len, or the stream is shorter than two chunks (as llama.cpp).
PerplexityResult perplexity(InferenceBackend& backend, const Config& config,
                            std::span<const int32_t> tokens, const PerplexityOptions& options,
                            const PerplexityProgress& progress = {});

// The default chunk length for a model: seq_len, at most 512.
int64_t default_perplexity_ctx(const Config& config);

}  // namespace llama
