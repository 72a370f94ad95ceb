// runq.c's attention of one head in its exact operation order: for one query
// (decode) and for a block of queries (a prompt). Every score is runq.c's
// FMA chain over the head in order, divided by sqrt(head_size); then runq.c's
// softmax and out = sum_t p_t v_t by FMAs in position order. A single chain
// waits on the FMA latency at every step (attention took a third of 15M's and
// 110M's int8 prefill), so the kernels run many chains side by side, each with
// the operations it has alone: several keys for one query, and for a block,
// the block's queries in the lanes of a register against each key. Bodies are
// compiled per SimdLevel (std::fma is exact everywhere: the same bits on every
// level, and a query's result is the same in a block as alone).
#include <algorithm>
#include <cmath>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "avx512_transpose.hpp"
#include "llama/kernels/cpu_features.hpp"
#include "llama/kernels/q8_math.hpp"
#include "llama/kernels/simd_target.hpp"
#include "q8_expf.hpp"

namespace llama::q8 {
namespace {

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

// Positions ahead of the one being read whose cache rows are prefetched: a
// head's rows are kv_dim floats apart, a stride the hardware prefetchers
// follow badly, and at depth (110M at position 900: 66 MB of cache per token)
// decode attention waited on memory.
constexpr int64_t kPrefetchAhead = 16;

// Asks for row t's head (hs floats at rows + t * stride) when t < n_pos.
LLAMA_ALWAYS_INLINE void prefetch_row(const float* rows, int64_t t, int64_t n_pos, int64_t stride,
                                      int64_t hs) {
  if (t >= n_pos) return;
  const float* r = rows + t * stride;
  for (int64_t i = 0; i < hs; i += 16) __builtin_prefetch(r + i);
}

#if LLAMA_HAVE_X86_TARGETS
// Keys per step of score16_avx512: one per lane.
constexpr int64_t kWideKeys = 16;
// Full masks: the maskz shuffles avoid GCC 12's spurious "may be used
// uninitialized" on the unmasked ones' undefined pass-through operand.
constexpr __mmask16 kAll16 = 0xffff;
constexpr __mmask8 kAll8 = 0xff;

// scores[j] = (q . key j) / root for the 16 keys at k + j * stride, hs a
// multiple of 16: key j's FMA chain over the head in order runs in lane j
// (16 of its elements loaded per row and transposed), so each score is
// score_key's. Gathering the keys lane by lane took 60% of decode attention
// at depth 900 (110M).
LLAMA_TARGET_AVX512 void score16_avx512(const float* q, int64_t hs, const float* k, int64_t stride,
                                        float root, float* scores) {
  __m512 acc = _mm512_setzero_ps();
  for (int64_t i0 = 0; i0 < hs; i0 += 16) {
    __m512 r[16];
    for (int j = 0; j < 16; ++j) r[j] = _mm512_loadu_ps(k + j * stride + i0);
    ::llama::detail::avx512::transpose16(r);
    for (int i = 0; i < 16; ++i) acc = _mm512_fmadd_ps(_mm512_set1_ps(q[i0 + i]), r[i], acc);
  }
  _mm512_storeu_ps(scores, _mm512_div_ps(acc, _mm512_set1_ps(root)));
}

// The largest of x[0, n), n > 0. Equal to runq.c's running max except
// perhaps for the sign of a zero maximum, which x - max does not see.
LLAMA_TARGET_AVX512 float max_avx512(const float* x, int64_t n) {
  __m512 m = _mm512_set1_ps(x[0]);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) m = _mm512_maskz_max_ps(kAll16, m, _mm512_loadu_ps(x + i));
  if (i < n) {
    const auto tail = static_cast<__mmask16>((1u << (n - i)) - 1);
    m = _mm512_mask_max_ps(m, tail, m, _mm512_maskz_loadu_ps(tail, x + i));
  }
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, m);
  return *std::max_element(lanes, lanes + 16);
}
#endif

// out = sum_t p_t v_t for a head of HS elements: the sums from zero, FMAs in
// position order (softmax_mix's), held in registers.
template <bool Fma, int64_t HS>
LLAMA_ALWAYS_INLINE void mix_fixed(const float* p, int64_t n_pos, const float* values,
                                   int64_t stride, float* out) {
  float acc[HS] = {};
  for (int64_t t = 0; t < n_pos; ++t) {
    prefetch_row(values, t + kPrefetchAhead, n_pos, stride, HS);
    const float* v = values + t * stride;
    const float a = p[t];
#pragma omp simd
    for (int64_t i = 0; i < HS; ++i) acc[i] = std::fma(a, v[i], acc[i]);
  }
  for (int64_t i = 0; i < HS; ++i) out[i] = acc[i];
}

// runq.c's softmax over scores[0, n_pos), then out = sum_t p_t v_t. Wide:
// the level has AVX-512 (the max and the exps in its lanes; the sum stays
// runq.c's chain in position order).
template <bool Fma, bool Wide>
LLAMA_ALWAYS_INLINE void softmax_mix(float* scores, int64_t n_pos, const float* values,
                                     int64_t stride, float* out, int64_t hs) {
  float sum = 0.0f;
#if LLAMA_HAVE_X86_TARGETS
  if (Wide && detail::vector_expf_matches_libm()) {
    detail::expf_shifted_avx512(scores, n_pos, max_avx512(scores, n_pos));
    for (int64_t t = 0; t < n_pos; ++t) sum += scores[t];
  } else
#endif
  {
    float max_val = scores[0];
    for (int64_t t = 1; t < n_pos; ++t) max_val = std::max(max_val, scores[t]);
    for (int64_t t = 0; t < n_pos; ++t) {
      scores[t] = std::exp(scores[t] - max_val);
      sum += scores[t];
    }
  }
  for (int64_t t = 0; t < n_pos; ++t) scores[t] /= sum;
  // Heads of up to 128 elements keep the sums in registers (through memory,
  // each position's FMAs waited on the previous position's stores).
  switch (hs) {
    case 16:
      return mix_fixed<Fma, 16>(scores, n_pos, values, stride, out);
    case 32:
      return mix_fixed<Fma, 32>(scores, n_pos, values, stride, out);
    case 48:
      return mix_fixed<Fma, 48>(scores, n_pos, values, stride, out);
    case 64:
      return mix_fixed<Fma, 64>(scores, n_pos, values, stride, out);
    case 80:
      return mix_fixed<Fma, 80>(scores, n_pos, values, stride, out);
    case 96:
      return mix_fixed<Fma, 96>(scores, n_pos, values, stride, out);
    case 112:
      return mix_fixed<Fma, 112>(scores, n_pos, values, stride, out);
    case 128:
      return mix_fixed<Fma, 128>(scores, n_pos, values, stride, out);
    default:
      break;
  }
  std::fill(out, out + hs, 0.0f);
  for (int64_t t = 0; t < n_pos; ++t) {
    prefetch_row(values, t + kPrefetchAhead, n_pos, stride, hs);
    const float* v = values + t * stride;
    const float a = scores[t];
    for (int64_t i = 0; i < hs; ++i) out[i] = std::fma(a, v[i], out[i]);
  }
}

// Wide: the level has AVX-512 (score16_avx512 for heads of whole vectors).
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

// Keys scored against a whole block at a time.
constexpr int64_t kBlockKeys = 4;

// st[t * kQueries + lane] = (query lane . key t) / root for t in [t0, t0 + K),
// queries transposed in qt (f32 [hs, kQueries]).
template <bool Fma, int64_t K>
LLAMA_ALWAYS_INLINE void score_block(const float* qt, int64_t hs, const float* k, int64_t stride,
                                     float root, float* st) {
  constexpr int64_t L = kAttendQueries;
  float acc[K][L] = {};
  for (int64_t i = 0; i < hs; ++i) {
    const float* qi = qt + i * L;
#pragma GCC unroll 4
    for (int64_t j = 0; j < K; ++j) {
      const float kj = k[j * stride + i];
#pragma omp simd
      for (int64_t lane = 0; lane < L; ++lane) acc[j][lane] = std::fma(qi[lane], kj, acc[j][lane]);
    }
  }
  for (int64_t j = 0; j < K; ++j) {
#pragma omp simd
    for (int64_t lane = 0; lane < L; ++lane) st[j * L + lane] = acc[j][lane] / root;
  }
}

// Head elements per pass of mix_block: as many accumulators as fit beside
// the probabilities in 32 registers.
constexpr int64_t kMixWidth = 16;

// softmax_mix for a whole block, the queries in lanes: st holds the scores
// (f32 [n_keys, L]); lane l's query uses keys [0, n_pos[l]). Per lane the same
// operations in the same order as softmax_mix (the max, exp and running sum in
// position order, then the FMAs into each output element from zero), so the
// same bits; only keys past a lane's position are skipped by a mask. hs must
// be a multiple of kMixWidth. Output row of lane l: out + l * out_ld, l < m.
template <bool Fma, bool Wide>
LLAMA_ALWAYS_INLINE void softmax_mix_block(float* st, int64_t n_keys, const int64_t* n_pos,
                                           const float* values, int64_t stride, int64_t hs,
                                           int64_t m, float* out, int64_t out_ld) {
  constexpr int64_t L = kAttendQueries;
  float max_val[L], sum[L];
  for (int64_t lane = 0; lane < L; ++lane) {
    max_val[lane] = st[lane];
    sum[lane] = 0.0f;
  }
  for (int64_t t = 1; t < n_keys; ++t) {
    for (int64_t lane = 0; lane < L; ++lane) {
      if (t < n_pos[lane]) max_val[lane] = std::max(max_val[lane], st[t * L + lane]);
    }
  }
  if (Wide && detail::vector_expf_matches_libm()) {
    detail::expf_lanes_avx512(st, n_keys, n_pos, max_val, sum);
  } else {
    for (int64_t t = 0; t < n_keys; ++t) {
      for (int64_t lane = 0; lane < L; ++lane) {
        if (t >= n_pos[lane]) continue;
        const float e = std::exp(st[t * L + lane] - max_val[lane]);
        st[t * L + lane] = e;
        sum[lane] += e;
      }
    }
  }
  for (int64_t t = 0; t < n_keys; ++t) {
#pragma omp simd
    for (int64_t lane = 0; lane < L; ++lane) {
      if (t < n_pos[lane]) st[t * L + lane] /= sum[lane];
    }
  }
  for (int64_t i0 = 0; i0 < hs; i0 += kMixWidth) {
    float acc[kMixWidth][L] = {};
    for (int64_t t = 0; t < n_keys; ++t) {
      const float* p = st + t * L;
      const float* v = values + t * stride + i0;
#pragma GCC unroll 16
      for (int64_t i = 0; i < kMixWidth; ++i) {
        const float vi = v[i];
#pragma omp simd
        for (int64_t lane = 0; lane < L; ++lane) {
          acc[i][lane] = t < n_pos[lane] ? std::fma(p[lane], vi, acc[i][lane]) : acc[i][lane];
        }
      }
    }
    for (int64_t lane = 0; lane < m; ++lane) {
      for (int64_t i = 0; i < kMixWidth; ++i) out[lane * out_ld + i0 + i] = acc[i][lane];
    }
  }
}

template <bool Fma, bool Wide>
LLAMA_ALWAYS_INLINE void attend_queries_body(const float* q, int64_t q_ld, int64_t n,
                                             int64_t first_pos, int64_t hs, const float* keys,
                                             const float* values, int64_t stride,
                                             std::span<float> scratch, float* out, int64_t out_ld) {
  constexpr int64_t L = kAttendQueries;
  const float root = std::sqrt(static_cast<float>(hs));
  for (int64_t i0 = 0; i0 < n; i0 += L) {
    const int64_t m = std::min(L, n - i0);
    const int64_t n_keys = first_pos + i0 + m;  // the block's last query sees them all
    float* qt = scratch.data();                 // f32 [hs, L]: the block's queries
    float* st = qt + hs * L;                    // f32 [n_keys, L]: their scores
    float* p = st + n_keys * L;                 // f32 [n_keys]: one query's scores
    for (int64_t i = 0; i < hs; ++i) {
      for (int64_t lane = 0; lane < L; ++lane) {
        qt[i * L + lane] = lane < m ? q[(i0 + lane) * q_ld + i] : 0.0f;
      }
    }
    int64_t t = 0;
    for (; t + kBlockKeys <= n_keys; t += kBlockKeys) {
      score_block<Fma, kBlockKeys>(qt, hs, keys + t * stride, stride, root, st + t * L);
    }
    for (; t < n_keys; ++t)
      score_block<Fma, 1>(qt, hs, keys + t * stride, stride, root, st + t * L);
    if (hs % kMixWidth == 0) {
      // Padding lanes (past m) repeat the last query's length; never stored.
      int64_t n_pos[L];
      for (int64_t lane = 0; lane < L; ++lane)
        n_pos[lane] = first_pos + i0 + std::min(lane, m - 1) + 1;
      softmax_mix_block<Fma, Wide>(st, n_keys, n_pos, values, stride, hs, m, out + i0 * out_ld,
                                   out_ld);
      continue;
    }
    for (int64_t lane = 0; lane < m; ++lane) {
      const int64_t n_pos = first_pos + i0 + lane + 1;
      for (int64_t u = 0; u < n_pos; ++u) p[u] = st[u * L + lane];
      softmax_mix<Fma, Wide>(p, n_pos, values, stride, out + (i0 + lane) * out_ld, hs);
    }
  }
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
LLAMA_TARGET_AVX512 void attend_queries_avx512(const float* q, int64_t q_ld, int64_t n,
                                               int64_t first_pos, int64_t hs, const float* keys,
                                               const float* values, int64_t stride,
                                               std::span<float> scratch, float* out,
                                               int64_t out_ld) {
  attend_queries_body<true, true>(q, q_ld, n, first_pos, hs, keys, values, stride, scratch, out,
                                  out_ld);
}
LLAMA_TARGET_AVX2 void attend_queries_avx2(const float* q, int64_t q_ld, int64_t n,
                                           int64_t first_pos, int64_t hs, const float* keys,
                                           const float* values, int64_t stride,
                                           std::span<float> scratch, float* out, int64_t out_ld) {
  attend_queries_body<true, false>(q, q_ld, n, first_pos, hs, keys, values, stride, scratch, out,
                                   out_ld);
}
void attend_queries_portable(const float* q, int64_t q_ld, int64_t n, int64_t first_pos, int64_t hs,
                             const float* keys, const float* values, int64_t stride,
                             std::span<float> scratch, float* out, int64_t out_ld) {
  attend_queries_body<false, false>(q, q_ld, n, first_pos, hs, keys, values, stride, scratch, out,
                                    out_ld);
}

}  // namespace

void attend_head(std::span<const float> q, const float* keys, const float* values, int64_t stride,
                 int64_t n_pos, std::span<float> scores, std::span<float> out) {
  attend_head_at_level(simd_level(), q, keys, values, stride, n_pos, scores, out);
}

void attend_head_at_level(SimdLevel level, std::span<const float> q, const float* keys,
                          const float* values, int64_t stride, int64_t n_pos,
                          std::span<float> scores, std::span<float> out) {
  LLAMA_SIMD_DISPATCH(runnable_level(level), attend, (q, keys, values, stride, n_pos, scores, out));
}

size_t attend_queries_scratch(int64_t head_size, int64_t n_keys) {
  return static_cast<size_t>(kAttendQueries * (head_size + n_keys) + n_keys);
}

void attend_queries(const float* q, int64_t q_ld, int64_t n, int64_t first_pos, int64_t head_size,
                    const float* keys, const float* values, int64_t stride,
                    std::span<float> scratch, float* out, int64_t out_ld) {
  attend_queries_at_level(simd_level(), q, q_ld, n, first_pos, head_size, keys, values, stride,
                          scratch, out, out_ld);
}

void attend_queries_at_level(SimdLevel level, const float* q, int64_t q_ld, int64_t n,
                             int64_t first_pos, int64_t head_size, const float* keys,
                             const float* values, int64_t stride, std::span<float> scratch,
                             float* out, int64_t out_ld) {
  LLAMA_SIMD_DISPATCH(
      runnable_level(level), attend_queries,
      (q, q_ld, n, first_pos, head_size, keys, values, stride, scratch, out, out_ld));
}

}  // namespace llama::q8
