// token_logprob: one pass for the maximum, one for the log-sum-exp, a partial
// sort of the top k.
#include "llama/logprobs.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "llama/error.hpp"

namespace llama {

TokenLogprob token_logprob(std::span<const float> logits, float temperature, int32_t chosen,
                           int k) {
  if (logits.empty()) throw Error("logprobs: no logits");
  if (chosen < 0 || static_cast<size_t>(chosen) >= logits.size()) {
    throw Error("logprobs: token " + std::to_string(chosen) + " outside the vocabulary");
  }
  if (k < 0 || k > kMaxTopLogprobs) {
    throw Error("logprobs: k must be in [0, " + std::to_string(kMaxTopLogprobs) + "], got " +
                std::to_string(k));
  }
  if (!(temperature >= 0) || !std::isfinite(temperature)) {
    throw Error("logprobs: temperature must be finite and >= 0");
  }
  const double scale = temperature > 0 ? 1.0 / static_cast<double>(temperature) : 1.0;
  const double max = static_cast<double>(*std::max_element(logits.begin(), logits.end())) * scale;
  double sum = 0;
  for (const float l : logits) sum += std::exp(static_cast<double>(l) * scale - max);
  const double log_z = max + std::log(sum);
  const auto logprob = [&](int32_t id) {
    return static_cast<double>(logits[static_cast<size_t>(id)]) * scale - log_z;
  };

  TokenLogprob out;
  out.id = chosen;
  out.logprob = logprob(chosen);
  if (k > 0) {
    std::vector<int32_t> ids(logits.size());  // i32 [vocab_size]
    for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int32_t>(i);
    const auto n = std::min<size_t>(static_cast<size_t>(k), ids.size());
    std::partial_sort(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(n), ids.end(),
                      [&](int32_t a, int32_t b) {
                        const float la = logits[static_cast<size_t>(a)];
                        const float lb = logits[static_cast<size_t>(b)];
                        return la > lb || (la == lb && a < b);
                      });
    for (size_t i = 0; i < n; ++i) out.top.push_back({ids[i], logprob(ids[i])});
  }
  return out;
}

}  // namespace llama
