// Sampler: the same float arithmetic and ordering as run.c, so seeds reproduce.
#include "llama/sampler.hpp"

#include <algorithm>
#include <cmath>

#include "llama/error.hpp"
#include "llama/kernels/cpu_features.hpp"
#include "llama/kernels/simd_target.hpp"

#if LLAMA_HAVE_X86_TARGETS
#include <immintrin.h>
#endif

namespace llama {
namespace {

// run.c's argmax loop: the first index whose value is greater than every
// value before it (a NaN never is, so a NaN at 0 stays the answer).
int32_t argmax_portable(const float* x, size_t n) {
  int32_t best = 0;
  for (size_t i = 1; i < n; ++i) {
    if (x[i] > x[static_cast<size_t>(best)]) best = static_cast<int32_t>(i);
  }
  return best;
}

#if LLAMA_HAVE_X86_TARGETS
// The same answer in two passes of 16 lanes, without the scalar loop's
// dependence on the last winner (greedy decoding's sampler was 12% of 15M's
// decode in llama-cli): the largest value (each lane keeps its first greater
// value, ordered compares, so NaNs never win), then the first index holding it.
LLAMA_TARGET_AVX512 int32_t argmax_avx512(const float* x, size_t n) {
  if (n < 32 || std::isnan(x[0])) return argmax_portable(x, n);
  __m512 m = _mm512_set1_ps(x[0]);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 v = _mm512_loadu_ps(x + i);
    m = _mm512_mask_mov_ps(m, _mm512_cmp_ps_mask(v, m, _CMP_GT_OQ), v);
  }
  alignas(64) float lanes[16];  // (GCC 12 warns inside _mm512_reduce_max_ps)
  _mm512_store_ps(lanes, m);
  float best = lanes[0];  // no NaN in m
  for (float v : lanes) best = std::max(best, v);
  for (; i < n; ++i) best = x[i] > best ? x[i] : best;
  const __m512 b = _mm512_set1_ps(best);
  for (i = 0; i + 16 <= n; i += 16) {
    const __mmask16 eq = _mm512_cmp_ps_mask(_mm512_loadu_ps(x + i), b, _CMP_EQ_OQ);
    if (eq != 0) return static_cast<int32_t>(i) + __builtin_ctz(eq);
  }
  for (; i < n; ++i) {
    if (x[i] == best) return static_cast<int32_t>(i);
  }
  return 0;  // not reached: best is one of the values
}
#endif

}  // namespace

void softmax(std::span<float> x) {
  if (x.empty()) return;
  float max_val = x[0];
  for (float v : x) max_val = std::max(max_val, v);
  float sum = 0.0f;
  for (float& v : x) {
    v = std::exp(v - max_val);
    sum += v;
  }
  for (float& v : x) v /= sum;
}

int32_t argmax(std::span<const float> x) {
#if LLAMA_HAVE_X86_TARGETS
  if (simd_level() == SimdLevel::avx512) return argmax_avx512(x.data(), x.size());
#endif
  return argmax_portable(x.data(), x.size());
}

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
