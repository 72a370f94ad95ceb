// Log-probabilities of sampled tokens, as OpenAI's API reports them: the
// natural log of each token's probability under the distribution it was
// drawn from (the logits divided by the temperature, before top-p cuts the
// tail; temperature 0, greedy, reports the plain softmax), and the K most
// likely alternatives with theirs.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace llama {

inline constexpr int kMaxTopLogprobs = 20;

struct TokenAlternative {
  int32_t id = 0;
  double logprob = 0;
};

struct TokenLogprob {
  int32_t id = 0;
  double logprob = 0;
  std::vector<TokenAlternative> top;  // the `k` most likely, most likely first (ties: lower id)
};

// Log-softmax of logits / temperature, in double, for `chosen` and the top `k`
// (0..kMaxTopLogprobs). Throws Error on a bad id, k or temperature.
TokenLogprob token_logprob(std::span<const float> logits, float temperature, int32_t chosen, int k);

}  // namespace llama
