// runq.c's attention of one head for one query (decode), in its exact
// operation order: every score is runq.c's FMA chain over the head in order,
// divided by sqrt(head_size); then runq.c's softmax and out = sum_t p_t v_t by
// FMAs in position order (runq_c_softmax.hpp). A single chain waits on the FMA
// latency at every step, so the scores run several keys side by side, each
// with the operations it has alone (16 in the lanes of a register on the
// avx512 level). Bodies are compiled per SimdLevel (std::fma is exact
// everywhere: the same bits on every level). A prompt's blocks of queries are
// runq_c_attention_block.cpp.
#include <algorithm>
#include <cmath>

#include "kernels/steps/attend_head_entries.hpp"
#include "kernels/steps/runq_c_softmax.hpp"
#include "kernels/x86/runq_c_scores_avx512.hpp"
#include "llama/kernels/dispatch/cpu_features.hpp"
#include "llama/kernels/steps/runq_c.hpp"
#include "llama/kernels/x86/simd_target.hpp"

namespace llama::q8 {
namespace {

using detail::kPrefetchAhead;
using detail::prefetch_row;
using detail::softmax_mix;
#if LLAMA_HAVE_X86_TARGETS
using detail::kWideKeys;
using detail::score16_avx512;
#endif

// Score chains of one query run side by side, kKeys keys at a time.
constexpr int64_t kKeys = 8;

// scores[t] = (q . key t) / root for t in [t0, t0 + kKeys).
template <bool Fma>
LLAMA_ALWAYS_INLINE void score_keys(const float* q, int64_t hs, const float* k, int64_t stride,
                                    float root, float* scores) {
  float acc[kKeys] = {};
  for (int64_t i = 0; i < hs; ++i) {
    const float qi = q[i];
#pragma GCC unroll 8
    for (int64_t j = 0; j < kKeys; ++j) acc[j] = std::fma(qi, k[j * stride + i], acc[j]);
  }
  for (int64_t j = 0; j < kKeys; ++j) scores[j] = acc[j] / root;
}

template <bool Fma>
LLAMA_ALWAYS_INLINE float score_key(const float* q, int64_t hs, const float* k, float root) {
  float score = 0.0f;
  for (int64_t i = 0; i < hs; ++i) score = std::fma(q[i], k[i], score);
  return score / root;
}

// Wide: the level has AVX-512 (score16_avx512, x86/runq_c_scores_avx512.hpp,
// for heads of whole vectors).
template <bool Fma, bool Wide>
LLAMA_ALWAYS_INLINE void attend_body(std::span<const float> q, const float* keys,
                                     const float* values, int64_t stride, int64_t n_pos,
                                     std::span<float> scores, std::span<float> out) {
  const auto hs = static_cast<int64_t>(q.size());
  const float root = std::sqrt(static_cast<float>(hs));
  int64_t t = 0;
#if LLAMA_HAVE_X86_TARGETS
  if constexpr (Wide) {
    if (hs % 16 == 0) {
      for (; t + kWideKeys <= n_pos; t += kWideKeys) {
        for (int64_t j = 0; j < kWideKeys; ++j)
          prefetch_row(keys, t + kPrefetchAhead + j, n_pos, stride, hs);
        score16_avx512(q.data(), hs, keys + t * stride, stride, root, scores.data() + t);
      }
    }
  }
#endif
  for (; t + kKeys <= n_pos; t += kKeys) {
    for (int64_t j = 0; j < kKeys; ++j)
      prefetch_row(keys, t + kPrefetchAhead + j, n_pos, stride, hs);
    score_keys<Fma>(q.data(), hs, keys + t * stride, stride, root, scores.data() + t);
  }
  for (; t < n_pos; ++t) scores[size_t(t)] = score_key<Fma>(q.data(), hs, keys + t * stride, root);
  for (int64_t u = 0; u < std::min(n_pos, kPrefetchAhead); ++u)
    prefetch_row(values, u, n_pos, stride, hs);
  softmax_mix<Fma, Wide>(scores.data(), n_pos, values, stride, out.data(), hs);
}

// attend_body per level (as LLAMA_SIMD_VARIANTS, the AVX-512 level Wide).
LLAMA_TARGET_AVX512 void attend_avx512(std::span<const float> q, const float* keys,
                                       const float* values, int64_t stride, int64_t n_pos,
                                       std::span<float> scores, std::span<float> out) {
  attend_body<true, true>(q, keys, values, stride, n_pos, scores, out);
}
LLAMA_TARGET_AVX2 void attend_avx2(std::span<const float> q, const float* keys, const float* values,
                                   int64_t stride, int64_t n_pos, std::span<float> scores,
                                   std::span<float> out) {
  attend_body<true, false>(q, keys, values, stride, n_pos, scores, out);
}
void attend_portable(std::span<const float> q, const float* keys, const float* values,
                     int64_t stride, int64_t n_pos, std::span<float> scores, std::span<float> out) {
  attend_body<false, false>(q, keys, values, stride, n_pos, scores, out);
}
}  // namespace

// attend_head and attend_head_at_level over runq.c's attend_<level> kernels.
LLAMA_ATTEND_HEAD_ENTRIES(attend)

}  // namespace llama::q8
