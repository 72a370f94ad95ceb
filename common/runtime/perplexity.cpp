// Perplexity over consecutive chunks, llama.cpp's llama-perplexity semantics.
#include "llama/perplexity.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include "llama/error.hpp"

namespace llama {
namespace {

// -log p(token) under softmax(logits), in double.
double negative_log_likelihood(std::span<const float> logits, int32_t token) {
  const float max = *std::max_element(logits.begin(), logits.end());
  double sum = 0;
  for (const float l : logits) sum += std::exp(static_cast<double>(l) - max);
  return -((static_cast<double>(logits[static_cast<size_t>(token)]) - max) - std::log(sum));
}

}  // namespace

double PerplexityResult::tokens_per_s() const {
  return seconds > 0 ? static_cast<double>(chunks * ctx) / seconds : 0.0;
}

int64_t default_perplexity_ctx(const Config& config) {
  return std::min<int64_t>(config.seq_len, 512);
}

PerplexityResult perplexity(InferenceBackend& backend, const Config& config,
                            std::span<const int32_t> tokens, const PerplexityOptions& options,
                            const PerplexityProgress& progress) {
  PerplexityResult r;
  r.ctx = options.ctx == 0 ? default_perplexity_ctx(config) : options.ctx;
  r.text_tokens = static_cast<int64_t>(tokens.size());
  if (r.ctx < 2) throw Error("ctx must be at least 2, got " + std::to_string(r.ctx));
  if (r.ctx > config.seq_len) {
    throw Error("ctx " + std::to_string(r.ctx) + " is larger than the model's context (seq_len " +
                std::to_string(config.seq_len) + ")");
  }
  if (r.text_tokens < 2 * r.ctx) {
    throw Error("the text has " + std::to_string(r.text_tokens) + " tokens; perplexity with ctx " +
                std::to_string(r.ctx) + " needs at least " + std::to_string(2 * r.ctx) +
                " (two chunks)");
  }
  r.chunks = r.text_tokens / r.ctx;
  const auto ctx = static_cast<size_t>(r.ctx);
  const auto vocab = static_cast<size_t>(config.vocab_size);
  std::vector<int32_t> chunk(ctx);  // i32 [ctx]
  double sum = 0, sum_sq = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int64_t c = 0; c < r.chunks; ++c) {
    const auto first = static_cast<size_t>(c) * ctx;
    std::copy_n(tokens.begin() + static_cast<std::ptrdiff_t>(first), ctx, chunk.begin());
    chunk[0] = options.bos;
    // f32 [ctx, vocab_size]
    const std::span<const float> logits = backend.forward_batch(chunk, 0, /*all_logits=*/true);
    if (logits.size() != ctx * vocab) {
      throw Error(backend.name() + ": forward_batch returned " + std::to_string(logits.size()) +
                  " logits, expected " + std::to_string(ctx * vocab));
    }
    for (size_t j = ctx / 2; j + 1 < ctx; ++j) {
      const int32_t next = tokens[first + j + 1];
      const double nll = negative_log_likelihood(logits.subspan(j * vocab, vocab), next);
      sum += nll;
      sum_sq += nll * nll;
      ++r.scored;
    }
    if (progress) progress(c + 1, r.chunks, std::exp(sum / static_cast<double>(r.scored)));
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const auto n = static_cast<double>(r.scored);
  r.mean_nll = sum / n;
  r.perplexity = std::exp(r.mean_nll);
  // llama.cpp: the variance of the per-token NLL over n - 1, then its square root.
  const double variance = sum_sq / n - r.mean_nll * r.mean_nll;
  r.nll_stderr = (variance > 0 && r.scored > 1) ? std::sqrt(variance / (n - 1)) : 0.0;
  r.perplexity_stderr = r.perplexity * r.nll_stderr;
  return r;
}

}  // namespace llama
