// Sampler: the same float arithmetic and ordering as run.c, so seeds reproduce.
#include "llama/sampler.hpp"

#include <algorithm>
#include <cmath>

#include "llama/error.hpp"

namespace llama {
int32_t sample_multinomial(std::span<const float> p, float coin) {
  float cdf = 0.0f;
  for (size_t i = 0; i < p.size(); ++i) {
    cdf += p[i];
    if (coin < cdf) return static_cast<int32_t>(i);
  }
  return static_cast<int32_t>(p.size()) - 1;  // rounding
}

Sampler::Sampler(int64_t vocab_size, float temperature, float top_p, uint64_t seed)
    : vocab_size_(vocab_size), temperature_(temperature), top_p_(top_p), rng_(seed) {
  if (vocab_size <= 0) throw Error("sampler: vocab_size must be positive");
  if (!(temperature >= 0.0f) || !std::isfinite(temperature)) {
    throw Error("sampler: temperature must be a finite number >= 0");
  }
  if (!(top_p >= 0.0f && top_p <= 1.0f)) throw Error("sampler: top-p must be in [0, 1]");
  candidates_.resize(static_cast<size_t>(vocab_size));
}

int32_t Sampler::sample(std::span<float> logits) {
  check_size(logits.size());
  if (temperature_ == 0.0f) return argmax(logits);
  for (float& l : logits) l /= temperature_;
  softmax(logits);
  const float coin = rng_.next_f32();
  if (top_p_ <= 0.0f || top_p_ >= 1.0f) return sample_multinomial(logits, coin);
  return sample_top_p(logits, coin);
}

int32_t Sampler::sample(std::span<const float> logits, std::span<float> scratch) {
  check_size(logits.size());
  if (temperature_ == 0.0f) return argmax(logits);  // greedy reads the logits in place
  if (scratch.size() < logits.size()) throw Error("sampler: scratch smaller than the logits");
  std::copy(logits.begin(), logits.end(), scratch.begin());
  return sample(scratch.first(logits.size()));
}

void Sampler::check_size(size_t n) const {
  if (static_cast<int64_t>(n) != vocab_size_) {
    throw Error("sampler: got " + std::to_string(n) + " logits, expected " +
                std::to_string(vocab_size_));
  }
}

int32_t Sampler::sample_top_p(std::span<const float> p, float coin) {
  // Tokens below the cutoff cannot be in the nucleus; dropping them first
  // keeps the sort short (run.c does the same).
  const float cutoff = (1.0f - top_p_) / static_cast<float>(p.size() - 1);
  size_t n = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] >= cutoff) candidates_[n++] = {p[i], static_cast<int32_t>(i)};
  }
  if (n == 0) return argmax(p);  // only with NaN probabilities
  // glibc's qsort is a stable merge sort here; stable_sort gives its order on ties.
  std::stable_sort(candidates_.begin(), candidates_.begin() + static_cast<std::ptrdiff_t>(n),
                   [](const ProbIndex& a, const ProbIndex& b) { return a.prob > b.prob; });
  float cumulative = 0.0f;
  size_t last = n - 1;
  for (size_t i = 0; i < n; ++i) {
    cumulative += candidates_[i].prob;
    if (cumulative > top_p_) {
      last = i;
      break;
    }
  }
  const float r = coin * cumulative;
  float cdf = 0.0f;
  for (size_t i = 0; i <= last; ++i) {
    cdf += candidates_[i].prob;
    if (r < cdf) return candidates_[i].index;
  }
  return candidates_[last].index;
}

}  // namespace llama
