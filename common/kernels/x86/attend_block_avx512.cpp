// AVX-512 bodies of a prompt's block attention (attend_block.hpp): run.c's
// scores in double, and softmax_mix_block's max, divisions and value sums,
// with the same operations in the same order per query as the loops they
// replace, so the same bits, at a few times their speed (docs/performance.md).
//
// Scores: each is a double sum from zero of the products of the query and key
// elements in head order (a float product is exact in double, so an FMA in
// double gives the loop's bits), then rounded to float and divided by the
// scale. The block's queries are widened to double once (16 x 16 transposes);
// keys go 8 at a time, each row widened once, for 16 accumulators. A key the
// queries of one half of the lanes do not see (the causal diagonal) is scored
// for the other half only.
//
// Value sums: each output element an FMA chain from zero over the keys its
// query sees, in key order. The loop kept the queries in the lanes (a
// broadcast of one value element and a masked FMA per element); here the head
// elements are in the lanes, 8 queries x 32 elements a pass: per key, 2
// vector loads of the value row and 8 broadcast probabilities feed 16 FMAs,
// and a key a query does not see is skipped for it, never multiplied by zero.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "kernels/steps/attend_block.hpp"
#include "kernels/x86/simd.hpp"
#include "llama/kernels/x86/avx512_transpose.hpp"
#include "llama/kernels/x86/simd_target.hpp"

namespace llama::detail {
namespace {

constexpr int64_t L = q8::kAttendQueries;  // 16 queries a block, one per f32 lane
// Full masks for the maskz forms: GCC 12 warns that the plain forms'
// undefined source "may be used uninitialized" (as in half_products_avx512.cpp).
// kAll4: the 4 doubles of a ymm.
using simd::kFull8;
constexpr __mmask8 kAll4 = 0xf;
constexpr int64_t kMixAhead = 8;
// Queries a pass of the value sums. 8 x 32 elements rather than 4 x 64: each
// value row is read half as often (a head's rows are 4 KiB apart in the 340M
// shape, all in the same few L1 sets, so they are back in L2 by the next
// pass).
constexpr int64_t kMixQueries = 8;

// Keys [t, t + K): st[(t + j) * L + lane] from the queries widened in qd
// (f64 [hs, L]), the keys widened to double in kd (f64 [K, hs]). H: the
// 8-lane halves scored, from half h0 (H = 1: the other half's keys are ones
// its queries do not see, or its lanes are the block's padding; its scores
// are stored as 0 and never read).
template <int K, int H>
LLAMA_TARGET_AVX512 inline void score_keys(float scale, const double* qd, int h0, int64_t hs,
                                           const float* k, int64_t stride, double* kd, float* st) {
  for (int j = 0; j < K; ++j) {
    for (int64_t i = 0; i < hs; i += 8) {
      _mm512_storeu_pd(kd + j * hs + i,
                       _mm512_maskz_cvtps_pd(kFull8, _mm256_loadu_ps(k + j * stride + i)));
    }
    // The keys after these (a hint: it may run past the cache's rows).
    for (int64_t i = 0; i < hs; i += 16) {
      _mm_prefetch(reinterpret_cast<const char*>(k + (K + j) * stride + i), _MM_HINT_T0);
    }
  }
  // The queries come widened: converting them here would cost 2 conversions
  // (4 uops on the FMA ports) per 16 FMAs.
  const double* q = qd + 8 * h0;
  __m512d acc[K][H];
  for (int j = 0; j < K; ++j) {
    for (int h = 0; h < H; ++h) acc[j][h] = _mm512_setzero_pd();
  }
  for (int64_t i = 0; i < hs; ++i) {
    __m512d qv[H];
    for (int h = 0; h < H; ++h) qv[h] = _mm512_loadu_pd(q + i * L + 8 * h);
    for (int j = 0; j < K; ++j) {
      const __m512d b = _mm512_set1_pd(kd[j * hs + i]);
      for (int h = 0; h < H; ++h) acc[j][h] = _mm512_fmadd_pd(qv[h], b, acc[j][h]);
    }
  }
  const __m256 s = _mm256_set1_ps(scale);
  for (int j = 0; j < K; ++j) {
    if (H == 1) _mm256_storeu_ps(st + j * L + 8 * (1 - h0), _mm256_setzero_ps());
    for (int h = 0; h < H; ++h) {
      _mm256_storeu_ps(st + j * L + 8 * (h0 + h),
                       _mm256_div_ps(_mm512_maskz_cvtpd_ps(kFull8, acc[j][h]), s));
    }
  }
}

// Keys [t, t_end) in groups of 8, 4, 2 and 1 (st and keys from row t).
template <int H>
LLAMA_TARGET_AVX512 inline void score_range(float scale, const double* qd, int h0, int64_t hs,
                                            const float* keys, int64_t stride, int64_t t,
                                            int64_t t_end, double* kd, float* st) {
  for (; t + 8 <= t_end; t += 8)
    score_keys<8, H>(scale, qd, h0, hs, keys + t * stride, stride, kd, st + t * L);
  for (; t + 4 <= t_end; t += 4)
    score_keys<4, H>(scale, qd, h0, hs, keys + t * stride, stride, kd, st + t * L);
  for (; t + 2 <= t_end; t += 2)
    score_keys<2, H>(scale, qd, h0, hs, keys + t * stride, stride, kd, st + t * L);
  for (; t < t_end; ++t)
    score_keys<1, H>(scale, qd, h0, hs, keys + t * stride, stride, kd, st + t * L);
}

// out[lane][e0 + 16 v] for the V vectors of kMixQueries query lanes l0..
// (their probabilities in st's lanes, n_pos keys each; `lanes` of them real,
// the rest the block's padding, neither summed nor stored), FMAs in key order.
template <int V>
LLAMA_TARGET_AVX512 inline void mix_group(const float* st, const int64_t* n_pos, int64_t l0,
                                          int64_t lanes, const float* values, int64_t stride,
                                          int64_t e0, float* out, int64_t out_ld) {
  constexpr int Q = kMixQueries;
  __m512 acc[Q][V];
  for (int j = 0; j < Q; ++j) {
    for (int v = 0; v < V; ++v) acc[j][v] = _mm512_setzero_ps();
  }
  int64_t common = n_pos[l0], last = n_pos[l0];
  for (int64_t j = 1; j < lanes; ++j) {
    common = std::min(common, n_pos[l0 + j]);
    last = std::max(last, n_pos[l0 + j]);
  }
  // Keys every lane of the group sees (the padding lanes' sums are
  // discarded).
  for (int64_t t = 0; t < common; ++t) {
    const float* row = values + t * stride + e0;
    const float* p = st + t * L + l0;
    // Asked for 8 keys ahead (a hint, past the end too): the rows' stride is
    // one the hardware prefetchers follow badly.
    for (int v = 0; v < V; ++v) {
      _mm_prefetch(reinterpret_cast<const char*>(row + kMixAhead * stride + 16 * v), _MM_HINT_T0);
    }
    __m512 x[V];
    for (int v = 0; v < V; ++v) x[v] = _mm512_loadu_ps(row + 16 * v);
    for (int j = 0; j < Q; ++j) {
      const __m512 pj = _mm512_set1_ps(p[j]);
      for (int v = 0; v < V; ++v) acc[j][v] = _mm512_fmadd_ps(pj, x[v], acc[j][v]);
    }
  }
  // The causal tail: a key only for the lanes that see it.
  for (int64_t t = common; t < last; ++t) {
    const float* row = values + t * stride + e0;
    const float* p = st + t * L + l0;
    for (int j = 0; j < Q; ++j) {
      if (j >= lanes || t >= n_pos[l0 + j]) continue;
      const __m512 pj = _mm512_set1_ps(p[j]);
      for (int v = 0; v < V; ++v)
        acc[j][v] = _mm512_fmadd_ps(pj, _mm512_loadu_ps(row + 16 * v), acc[j][v]);
    }
  }
  for (int j = 0; j < Q; ++j) {
    if (j >= lanes) break;
    for (int v = 0; v < V; ++v) _mm512_storeu_ps(out + (l0 + j) * out_ld + e0 + 16 * v, acc[j][v]);
  }
}

}  // namespace

LLAMA_TARGET_AVX512 void score_query_block_double_avx512(float scale, const float* q, int64_t q_ld,
                                                         int64_t m, int64_t hs, const float* keys,
                                                         int64_t stride, int64_t n_keys,
                                                         float* st) {
  // qd[i * L + lane] = double(query lane's element i), lanes past m zero:
  // 16 x 16 floats transposed, then widened.
  double qd[kMaxBlockHead * L];
  for (int64_t i0 = 0; i0 < hs; i0 += 16) {
    __m512 r[16];
    for (int64_t lane = 0; lane < L; ++lane)
      r[lane] = lane < m ? _mm512_loadu_ps(q + lane * q_ld + i0) : _mm512_setzero_ps();
    avx512::transpose16(r);
    for (int64_t e = 0; e < 16; ++e) {
      double* row = qd + (i0 + e) * L;
      const __m512d lanes = _mm512_castps_pd(r[e]);
      const __m256 lo = _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(kAll4, lanes, 0));
      const __m256 hi = _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(kAll4, lanes, 1));
      _mm512_storeu_pd(row, _mm512_maskz_cvtps_pd(kFull8, lo));
      _mm512_storeu_pd(row + 8, _mm512_maskz_cvtps_pd(kFull8, hi));
    }
  }
  double kd[8 * kMaxBlockHead];  // f64 [8, hs]: the keys being scored, widened
  // Lanes 0-7 see keys [0, lo_end) (lane l: n_keys - m + l + 1); a block of
  // at most 8 queries has only padding in lanes 8-15. Their scores are not
  // needed (the softmax and value sums skip them), so only the lanes that see
  // a key are scored: at a causal prompt's diagonal a quarter of the block's
  // last 16 keys' scores.
  if (m <= 8) {
    score_range<1>(scale, qd, 0, hs, keys, stride, 0, n_keys, kd, st);
    return;
  }
  const int64_t lo_end = n_keys - m + 8;
  score_range<2>(scale, qd, 0, hs, keys, stride, 0, lo_end, kd, st);
  score_range<1>(scale, qd, 1, hs, keys, stride, lo_end, n_keys, kd, st);
}

// Lane l's keys: t < n_pos[l] (int32 lanes: a block's key counts are far
// below 2^31).
LLAMA_TARGET_AVX512 inline __m512i key_counts(const int64_t* n_pos) {
  const __m256i lo = _mm512_maskz_cvtepi64_epi32(kFull8, _mm512_loadu_si512(n_pos));
  const __m256i hi = _mm512_maskz_cvtepi64_epi32(kFull8, _mm512_loadu_si512(n_pos + 8));
  const __m512i low = _mm512_maskz_inserti64x4(kFull8, _mm512_setzero_si512(), lo, 0);
  return _mm512_maskz_inserti64x4(kFull8, low, hi, 1);
}

LLAMA_TARGET_AVX512 void block_max_avx512(const float* st, int64_t n_keys, const int64_t* n_pos,
                                          float* max_val) {
  const __m512i counts = key_counts(n_pos);
  __m512 mx = _mm512_loadu_ps(st);
  for (int64_t t = 1; t < n_keys; ++t) {
    const __mmask16 sees = _mm512_cmpgt_epi32_mask(counts, _mm512_set1_epi32(int(t)));
    // vmaxps(x, mx) is x > mx ? x : mx, std::max(mx, x) exactly (a NaN x
    // leaves mx, a NaN mx stays, equal zeros keep mx's sign).
    mx = _mm512_mask_max_ps(mx, sees, _mm512_loadu_ps(st + t * L), mx);
  }
  _mm512_storeu_ps(max_val, mx);
}

LLAMA_TARGET_AVX512 void block_divide_avx512(float* st, int64_t n_keys, const int64_t* n_pos,
                                             const float* sum) {
  const __m512i counts = key_counts(n_pos);
  const __m512 s = _mm512_loadu_ps(sum);
  for (int64_t t = 0; t < n_keys; ++t) {
    const __mmask16 sees = _mm512_cmpgt_epi32_mask(counts, _mm512_set1_epi32(int(t)));
    const __m512 x = _mm512_loadu_ps(st + t * L);
    _mm512_storeu_ps(st + t * L, _mm512_mask_div_ps(x, sees, x, s));
  }
}

LLAMA_TARGET_AVX512 void mix_block_avx512(const float* st, const int64_t* n_pos,
                                          const float* values, int64_t stride, int64_t hs,
                                          int64_t m, float* out, int64_t out_ld) {
  for (int64_t l0 = 0; l0 < m; l0 += kMixQueries) {
    const int64_t lanes = std::min(kMixQueries, m - l0);
    int64_t e0 = 0;
    for (; e0 + 32 <= hs; e0 += 32)
      mix_group<2>(st, n_pos, l0, lanes, values, stride, e0, out, out_ld);
    if (e0 < hs) mix_group<1>(st, n_pos, l0, lanes, values, stride, e0, out, out_ld);
  }
}

}  // namespace llama::detail
