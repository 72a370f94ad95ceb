// AVX-512 bodies of a prompt's block attention (attend_block.hpp): run.c's
// scores in double and the value sums of softmax_mix_block, with the same
// operations in the same order per query as the loops they replace, so the
// same bits, at a few times their speed (docs/performance.md).
//
// Scores: each is a double sum from zero of the products of the query and key
// elements in head order (a float product is exact in double, so an FMA in
// double gives the loop's bits), then rounded to float and divided by the
// scale. Here 8 keys at a time, each key row widened to double once, each
// query lane's 16 floats widened once per head element for 16 accumulators.
//
// Value sums: each output element an FMA chain from zero over the keys its
// query sees, in key order. The loop kept the queries in the lanes (a
// broadcast of one value element and a masked FMA per element); here the head
// elements are in the lanes, 4 queries x 64 elements a pass: per key, 4
// vector loads of the value row and 4 broadcast probabilities feed 16 FMAs,
// and a key a query does not see is skipped for it, never multiplied by zero.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "attend_block.hpp"
#include "llama/kernels/simd_target.hpp"

namespace llama::detail {
namespace {

constexpr int64_t L = q8::kAttendQueries;  // 16 queries a block, one per f32 lane
// Full masks for the maskz forms: GCC 12 warns that the plain forms'
// undefined source "may be used uninitialized" (as in half_products_avx512.cpp).
constexpr __mmask8 kAll8 = 0xff;
constexpr int64_t kMixAhead = 8;

// Keys [t, t + K): st[(t + j) * L + lane] from the queries' transposed floats
// qt (f32 [hs, L]), the keys widened to double in kd (f64 [K, hs]).
template <int K>
LLAMA_TARGET_AVX512 inline void score_keys(float scale, const float* qt, int64_t hs, const float* k,
                                           int64_t stride, double* kd, float* st) {
  for (int j = 0; j < K; ++j) {
    for (int64_t i = 0; i < hs; i += 8) {
      _mm512_storeu_pd(kd + j * hs + i,
                       _mm512_maskz_cvtps_pd(kAll8, _mm256_loadu_ps(k + j * stride + i)));
    }
    // The keys after these (a hint: it may run past the cache's rows).
    for (int64_t i = 0; i < hs; i += 16) {
      _mm_prefetch(reinterpret_cast<const char*>(k + (K + j) * stride + i), _MM_HINT_T0);
    }
  }
  __m512d acc[K][2];
  for (int j = 0; j < K; ++j) acc[j][0] = acc[j][1] = _mm512_setzero_pd();
  for (int64_t i = 0; i < hs; ++i) {
    const __m512d q0 = _mm512_maskz_cvtps_pd(kAll8, _mm256_loadu_ps(qt + i * L));
    const __m512d q1 = _mm512_maskz_cvtps_pd(kAll8, _mm256_loadu_ps(qt + i * L + 8));
    for (int j = 0; j < K; ++j) {
      const __m512d b = _mm512_set1_pd(kd[j * hs + i]);
      acc[j][0] = _mm512_fmadd_pd(q0, b, acc[j][0]);
      acc[j][1] = _mm512_fmadd_pd(q1, b, acc[j][1]);
    }
  }
  const __m256 s = _mm256_set1_ps(scale);
  for (int j = 0; j < K; ++j) {
    _mm256_storeu_ps(st + j * L, _mm256_div_ps(_mm512_maskz_cvtpd_ps(kAll8, acc[j][0]), s));
    _mm256_storeu_ps(st + j * L + 8, _mm256_div_ps(_mm512_maskz_cvtpd_ps(kAll8, acc[j][1]), s));
  }
}

// out[lane][e0 + 16 v] for the V vectors of 4 query lanes l0.. (their
// probabilities in st's lanes, n_pos keys each), FMAs in key order.
template <int V>
LLAMA_TARGET_AVX512 inline void mix_group(const float* st, const int64_t* n_pos, int64_t l0,
                                          int64_t lanes, const float* values, int64_t stride,
                                          int64_t e0, float* out, int64_t out_ld) {
  __m512 acc[4][V];
  for (int j = 0; j < 4; ++j) {
    for (int v = 0; v < V; ++v) acc[j][v] = _mm512_setzero_ps();
  }
  int64_t common = n_pos[l0], last = n_pos[l0];
  for (int64_t j = 1; j < lanes; ++j) {
    common = std::min(common, n_pos[l0 + j]);
    last = std::max(last, n_pos[l0 + j]);
  }
  // Keys every lane of the group sees; lanes past `lanes` are the block's
  // padding (their sums are never stored).
  for (int64_t t = 0; t < common; ++t) {
    const float* row = values + t * stride + e0;
    const float* p = st + t * L + l0;
    // A head's rows sit kv_dim floats apart (4 KiB in the 340M shape), all in
    // the same few L1 sets: asked for 8 keys ahead (a hint, past the end too).
    for (int v = 0; v < V; ++v) {
      _mm_prefetch(reinterpret_cast<const char*>(row + kMixAhead * stride + 16 * v), _MM_HINT_T0);
    }
    __m512 x[V];
    for (int v = 0; v < V; ++v) x[v] = _mm512_loadu_ps(row + 16 * v);
    for (int j = 0; j < 4; ++j) {
      const __m512 pj = _mm512_set1_ps(p[j]);
      for (int v = 0; v < V; ++v) acc[j][v] = _mm512_fmadd_ps(pj, x[v], acc[j][v]);
    }
  }
  // The causal tail: a key only for the lanes that see it.
  for (int64_t t = common; t < last; ++t) {
    const float* row = values + t * stride + e0;
    const float* p = st + t * L + l0;
    for (int64_t j = 0; j < lanes; ++j) {
      if (t >= n_pos[l0 + j]) continue;
      const __m512 pj = _mm512_set1_ps(p[j]);
      for (int v = 0; v < V; ++v)
        acc[j][v] = _mm512_fmadd_ps(pj, _mm512_loadu_ps(row + 16 * v), acc[j][v]);
    }
  }
  for (int64_t j = 0; j < lanes; ++j) {
    for (int v = 0; v < V; ++v) _mm512_storeu_ps(out + (l0 + j) * out_ld + e0 + 16 * v, acc[j][v]);
  }
}

}  // namespace

LLAMA_TARGET_AVX512 void score_query_block_double_avx512(float scale, const float* q, int64_t q_ld,
                                                         int64_t m, int64_t hs, const float* keys,
                                                         int64_t stride, int64_t n_keys, float* qt,
                                                         float* st) {
  for (int64_t i = 0; i < hs; ++i) {
    for (int64_t lane = 0; lane < L; ++lane)
      qt[i * L + lane] = lane < m ? q[lane * q_ld + i] : 0.0f;
  }
  double kd[8 * kMaxBlockHead];  // f64 [8, hs]: the keys being scored, widened
  int64_t t = 0;
  for (; t + 8 <= n_keys; t += 8)
    score_keys<8>(scale, qt, hs, keys + t * stride, stride, kd, st + t * L);
  for (; t + 4 <= n_keys; t += 4)
    score_keys<4>(scale, qt, hs, keys + t * stride, stride, kd, st + t * L);
  for (; t < n_keys; ++t) score_keys<1>(scale, qt, hs, keys + t * stride, stride, kd, st + t * L);
}

LLAMA_TARGET_AVX512 void mix_block_avx512(const float* st, const int64_t* n_pos,
                                          const float* values, int64_t stride, int64_t hs,
                                          int64_t m, float* out, int64_t out_ld) {
  for (int64_t l0 = 0; l0 < m; l0 += 4) {
    const int64_t lanes = std::min<int64_t>(4, m - l0);
    for (int64_t e0 = 0; e0 < hs; e0 += 64) {
      switch (std::min<int64_t>(64, hs - e0) / 16) {
        case 4:
          mix_group<4>(st, n_pos, l0, lanes, values, stride, e0, out, out_ld);
          break;
        case 3:
          mix_group<3>(st, n_pos, l0, lanes, values, stride, e0, out, out_ld);
          break;
        case 2:
          mix_group<2>(st, n_pos, l0, lanes, values, stride, e0, out, out_ld);
          break;
        default:
          mix_group<1>(st, n_pos, l0, lanes, values, stride, e0, out, out_ld);
          break;
      }
    }
  }
}

}  // namespace llama::detail
