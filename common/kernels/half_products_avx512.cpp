// AVX-512 batch kernels for bf16/f16 weights read in place (prefill):
// register tiles of R weight rows x T activation vectors, each weight vector
// loaded (and upcast) once per tile step for the T vectors.
// - exact: every (row, vector) result is blocks_f32_avx512.cpp's row_bf16 /
//   row_f16 for that pair, bit for bit: the same 16 f32 lanes per result, the
//   same fused multiply-adds in the same order (f16: two accumulators over
//   32-value steps, the tail into the first), the same pairwise horizontal sum.
// Also the rounding of activations to bf16 for the fast path (whose products
// oneDNN runs: half_products_onednn.cpp).
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "half_kernels.hpp"
#include "llama/kernels/simd_target.hpp"

#define LLAMA_TARGET_AVX512_BF16                                                     \
  __attribute__((                                                                    \
      target("avx512f,avx512bw,avx512vl,avx512dq,avx512cd,avx512bf16,avx2,fma,f16c," \
             "bmi,bmi2,lzcnt,movbe,popcnt")))

namespace llama::detail {
namespace {

// The rows a tile of weights spans (kept in L2 while the batch passes over
// it); the register tiles' shapes are at half_matmat_rows_avx512.
constexpr int64_t kTileRows = 64;
// Bytes a decode pass prefetches ahead of where it reads: 16 KiB measured
// best (8 KiB 0.86-0.90 of a one-thread read probe, 16 KiB 0.95-1.02, 32 KiB
// 0.90; the next rows at the same column, as before, 0.77-0.82: AMD Zen 5,
// the 340M shape's matrices from DRAM).
constexpr int64_t kDecodePrefetch = 16384;
// Into L2 (T2), not L1 (T0): on Intel Xeon model 207 (Emerald Rapids class,
// KVM, 2 threads, the 340M shape's bf16 matrices from DRAM) T2 reached
// 0.85-0.87 of a same-run read probe where T0 reached 0.74-0.82 (T1 0.80-0.84,
// none 0.54-0.62, NTA 0.36-0.46; f16 0.85 vs 0.74): an L1 prefetch holds a
// fill buffer until its line arrives, one to L2 frees it for the loads.
constexpr auto kDecodeHint = _MM_HINT_T2;
// The masked (maskz, all lanes) forms of the shift and widening intrinsics:
// GCC 12 warns that the plain forms' undefined source "may be used
// uninitialized" (as in blocks_f32_avx512.cpp).
constexpr __mmask16 kAll = 0xffff;

// row_bf16/row_f16's horizontal sum, pairwise in this order.
LLAMA_TARGET_AVX512 inline float hsum(__m512 v) {
  alignas(64) float t[16];
  _mm512_store_ps(t, v);
  for (int w = 8; w > 0; w /= 2) {
    for (int i = 0; i < w; ++i) t[i] += t[i + w];
  }
  return t[0];
}

LLAMA_TARGET_AVX512 inline __mmask16 tail_mask(int64_t left) {
  return static_cast<__mmask16>(left >= 16 ? 0xffff : (1u << left) - 1);
}

LLAMA_TARGET_AVX512 inline __m512 bf16_upcast(__m256i h) {
  return _mm512_castsi512_ps(
      _mm512_maskz_slli_epi32(kAll, _mm512_maskz_cvtepu16_epi32(kAll, h), 16));
}

// R rows from `w` (row stride w_ld values) x T vectors from `x` (stride ld),
// n values each, results at out[t * out_ld + r].
template <int R, int T>
LLAMA_TARGET_AVX512 void bf16_tile(const uint16_t* w, int64_t w_ld, const float* x, int64_t ld,
                                   int64_t n, float* out, int64_t out_ld) {
  __m512 acc[R][T];
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < T; ++t) acc[r][t] = _mm512_setzero_ps();
  int64_t k = 0;
  for (; k + 16 <= n; k += 16) {
    __m512 wv[R];
    for (int r = 0; r < R; ++r) {
      wv[r] = bf16_upcast(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + r * w_ld + k)));
    }
    for (int t = 0; t < T; ++t) {
      const __m512 xv = _mm512_loadu_ps(x + t * ld + k);
      for (int r = 0; r < R; ++r) acc[r][t] = _mm512_fmadd_ps(wv[r], xv, acc[r][t]);
    }
  }
  if (k < n) {
    const __mmask16 m = tail_mask(n - k);
    __m512 wv[R];
    for (int r = 0; r < R; ++r) {
      wv[r] = _mm512_castsi512_ps(_mm512_maskz_slli_epi32(
          kAll, _mm512_maskz_cvtepu16_epi32(m, _mm256_maskz_loadu_epi16(m, w + r * w_ld + k)), 16));
    }
    for (int t = 0; t < T; ++t) {
      const __m512 xv = _mm512_maskz_loadu_ps(m, x + t * ld + k);
      for (int r = 0; r < R; ++r) acc[r][t] = _mm512_fmadd_ps(wv[r], xv, acc[r][t]);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < T; ++t) out[t * out_ld + r] = hsum(acc[r][t]);
}

// f16: row_f16's two accumulators per (row, vector), one over the first and
// one over the second half of each 32-value step, so a tile holds 2 R T sums;
// each half's weights are widened for all R rows, used for the T vectors,
// then the other half's. 4 rows x 3 vectors (24 sums, 4 weights, 1 vector in
// registers) measured 1.5-1.7x the 2 x 4 tile this replaced (AMD Zen 5, one
// thread, the 110M/340M shapes, 128 vectors): per 12 FMAs it loads 3 vectors
// of x instead of 6, and it is within 0.8-1.0 of bf16's 4 x 4.
template <int R, int T>
LLAMA_TARGET_AVX512 void f16_tile(const uint16_t* w, int64_t w_ld, const float* x, int64_t ld,
                                  int64_t n, float* out, int64_t out_ld) {
  __m512 a0[R][T], a1[R][T];
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < T; ++t) a0[r][t] = a1[r][t] = _mm512_setzero_ps();
  int64_t k = 0;
  for (; k + 32 <= n; k += 32) {
    __m512 wv[R];
    for (int r = 0; r < R; ++r) {
      wv[r] = _mm512_maskz_cvtph_ps(
          kAll, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + r * w_ld + k)));
    }
    for (int t = 0; t < T; ++t) {
      const __m512 x0 = _mm512_loadu_ps(x + t * ld + k);
      for (int r = 0; r < R; ++r) a0[r][t] = _mm512_fmadd_ps(wv[r], x0, a0[r][t]);
    }
    for (int r = 0; r < R; ++r) {
      wv[r] = _mm512_maskz_cvtph_ps(
          kAll, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + r * w_ld + k + 16)));
    }
    for (int t = 0; t < T; ++t) {
      const __m512 x1 = _mm512_loadu_ps(x + t * ld + k + 16);
      for (int r = 0; r < R; ++r) a1[r][t] = _mm512_fmadd_ps(wv[r], x1, a1[r][t]);
    }
  }
  for (; k < n; k += 16) {
    const __mmask16 m = tail_mask(n - k);
    __m512 wv[R];
    for (int r = 0; r < R; ++r) {
      wv[r] = _mm512_maskz_cvtph_ps(m, _mm256_maskz_loadu_epi16(m, w + r * w_ld + k));
    }
    for (int t = 0; t < T; ++t) {
      const __m512 xv = _mm512_maskz_loadu_ps(m, x + t * ld + k);
      for (int r = 0; r < R; ++r) a0[r][t] = _mm512_fmadd_ps(wv[r], xv, a0[r][t]);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < T; ++t) out[t * out_ld + r] = hsum(_mm512_add_ps(a0[r][t], a1[r][t]));
}

// Decode: rows [row_begin, row_end) of W x into out[r - row_begin], R rows at a
// time so each 16 values of x are loaded once for R rows and R independent
// FMA chains overlap. R interleaved row streams defeat the hardware
// prefetcher, so each 32-value step, which reads one cache line of each of
// the R rows, prefetches R lines into L2 in address order kDecodePrefetch
// bytes ahead of the pass's linear position: the R rows are contiguous, so the
// prefetches sweep the block's bytes once, in order, a fixed distance ahead
// (into the next rows, the next block, the next matrix). Per row the same
// lanes and order as the tiles above (row_bf16/row_f16's).
template <int R>
LLAMA_TARGET_AVX512 void bf16_rows(const uint16_t* w, int64_t cols, const float* x, float* out) {
  __m512 acc[R];
  for (int r = 0; r < R; ++r) acc[r] = _mm512_setzero_ps();
  // An address, not a pointer: it may run past the matrix (a hint, no fault).
  uintptr_t ahead = reinterpret_cast<uintptr_t>(w) + kDecodePrefetch;
  int64_t k = 0;
  for (; k + 32 <= cols; k += 32, ahead += R * 64) {
    for (int r = 0; r < R; ++r)
      _mm_prefetch(reinterpret_cast<const char*>(ahead + r * 64), kDecodeHint);
    const __m512 x0 = _mm512_loadu_ps(x + k), x1 = _mm512_loadu_ps(x + k + 16);
    for (int r = 0; r < R; ++r) {
      const uint16_t* p = w + r * cols + k;
      acc[r] = _mm512_fmadd_ps(bf16_upcast(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))),
                               x0, acc[r]);
      acc[r] = _mm512_fmadd_ps(
          bf16_upcast(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 16))), x1, acc[r]);
    }
  }
  for (; k < cols; k += 16) {
    const __mmask16 m = tail_mask(cols - k);
    const __m512 xv = _mm512_maskz_loadu_ps(m, x + k);
    for (int r = 0; r < R; ++r) {
      const __m512 wv = _mm512_castsi512_ps(_mm512_maskz_slli_epi32(
          kAll, _mm512_maskz_cvtepu16_epi32(m, _mm256_maskz_loadu_epi16(m, w + r * cols + k)), 16));
      acc[r] = _mm512_fmadd_ps(wv, xv, acc[r]);
    }
  }
  for (int r = 0; r < R; ++r) out[r] = hsum(acc[r]);
}

template <int R>
LLAMA_TARGET_AVX512 void f16_rows(const uint16_t* w, int64_t cols, const float* x, float* out) {
  __m512 a0[R], a1[R];
  for (int r = 0; r < R; ++r) a0[r] = a1[r] = _mm512_setzero_ps();
  // An address, not a pointer: it may run past the matrix (a hint, no fault).
  uintptr_t ahead = reinterpret_cast<uintptr_t>(w) + kDecodePrefetch;
  int64_t k = 0;
  for (; k + 32 <= cols; k += 32, ahead += R * 64) {
    for (int r = 0; r < R; ++r)
      _mm_prefetch(reinterpret_cast<const char*>(ahead + r * 64), kDecodeHint);
    const __m512 x0 = _mm512_loadu_ps(x + k), x1 = _mm512_loadu_ps(x + k + 16);
    for (int r = 0; r < R; ++r) {
      const uint16_t* p = w + r * cols + k;
      a0[r] = _mm512_fmadd_ps(
          _mm512_maskz_cvtph_ps(kAll, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))), x0,
          a0[r]);
      a1[r] = _mm512_fmadd_ps(
          _mm512_maskz_cvtph_ps(kAll, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 16))),
          x1, a1[r]);
    }
  }
  for (; k < cols; k += 16) {
    const __mmask16 m = tail_mask(cols - k);
    const __m512 xv = _mm512_maskz_loadu_ps(m, x + k);
    for (int r = 0; r < R; ++r) {
      a0[r] = _mm512_fmadd_ps(
          _mm512_maskz_cvtph_ps(m, _mm256_maskz_loadu_epi16(m, w + r * cols + k)), xv, a0[r]);
    }
  }
  for (int r = 0; r < R; ++r) out[r] = hsum(_mm512_add_ps(a0[r], a1[r]));
}

// One register tile of up to R rows and V (at most 4) vectors, dispatched on
// the remainders.
template <template <int, int> class Tile, int R, int V>
LLAMA_TARGET_AVX512 void run_vectors(const uint16_t* w, int64_t w_ld, const float* x, int64_t ld,
                                     int64_t n, int64_t vectors, float* out, int64_t out_ld) {
  static_assert(V >= 1 && V <= 4);
  int64_t t = 0;
  for (; t + V <= vectors; t += V) {
    Tile<R, V>::run(w, w_ld, x + t * ld, ld, n, out + t * out_ld, out_ld);
  }
  switch (vectors - t) {
    case 3:
      Tile<R, 3>::run(w, w_ld, x + t * ld, ld, n, out + t * out_ld, out_ld);
      break;
    case 2:
      Tile<R, 2>::run(w, w_ld, x + t * ld, ld, n, out + t * out_ld, out_ld);
      break;
    case 1:
      Tile<R, 1>::run(w, w_ld, x + t * ld, ld, n, out + t * out_ld, out_ld);
      break;
    default:
      break;
  }
}

template <int R, int T>
struct Bf16Tile {
  LLAMA_TARGET_AVX512 static void run(const uint16_t* w, int64_t w_ld, const float* x, int64_t ld,
                                      int64_t n, float* out, int64_t out_ld) {
    bf16_tile<R, T>(w, w_ld, x, ld, n, out, out_ld);
  }
};
template <int R, int T>
struct F16Tile {
  LLAMA_TARGET_AVX512 static void run(const uint16_t* w, int64_t w_ld, const float* x, int64_t ld,
                                      int64_t n, float* out, int64_t out_ld) {
    f16_tile<R, T>(w, w_ld, x, ld, n, out, out_ld);
  }
};

// Rows [row_begin, row_end) in tiles of kTileRows; within a tile, every group
// of V vectors passes over the tile's rows R at a time.
template <template <int, int> class Tile, int R, int V>
LLAMA_TARGET_AVX512 void run_rows(float* out, int64_t out_stride, const BlockMatrix& w,
                                  const float* x, int64_t ld, int64_t n, int64_t row_begin,
                                  int64_t row_end) {
  const int64_t cols = w.cols;
  const auto* base = reinterpret_cast<const uint16_t*>(w.bytes.data());
  for (int64_t r0 = row_begin; r0 < row_end; r0 += kTileRows) {
    const int64_t r1 = std::min(row_end, r0 + kTileRows);
    for (int64_t t = 0; t < n; t += V) {
      const int64_t vectors = std::min<int64_t>(V, n - t);
      const float* xt = x + t * ld;
      float* ot = out + t * out_stride;
      int64_t r = r0;
      for (; r + R <= r1; r += R) {
        run_vectors<Tile, R, V>(base + r * cols, cols, xt, ld, cols, vectors, ot + r, out_stride);
      }
      for (; r < r1; ++r) {
        run_vectors<Tile, 1, V>(base + r * cols, cols, xt, ld, cols, vectors, ot + r, out_stride);
      }
    }
  }
}

}  // namespace

LLAMA_TARGET_AVX512_BF16 void round_to_bf16(const float* x, int64_t n, uint16_t* out,
                                            int64_t padded) {
  int64_t k = 0;
  for (; k + 32 <= n; k += 32) {
    const __m512bh v = _mm512_cvtne2ps_pbh(_mm512_loadu_ps(x + k + 16), _mm512_loadu_ps(x + k));
    _mm512_storeu_si512(out + k, (__m512i)v);
  }
  for (; k < padded; k += 16) {
    const __mmask16 m = tail_mask(std::max<int64_t>(n - k, 0));
    const __m256bh v = _mm512_cvtneps_pbh(_mm512_maskz_loadu_ps(m, x + k));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + k), (__m256i)v);
  }
}

LLAMA_TARGET_AVX512 void half_matvec_rows_avx512(float* out, const BlockMatrix& w, const float* x,
                                                 int64_t row_begin, int64_t row_end) {
  constexpr int R = 4;
  const int64_t cols = w.cols;
  const auto* base = reinterpret_cast<const uint16_t*>(w.bytes.data());
  const bool bf16 = w.kind == BlockKind::bf16;
  int64_t r = row_begin;
  for (; r + R <= row_end; r += R) {
    float* o = out + (r - row_begin);
    const uint16_t* rows = base + r * cols;
    bf16 ? bf16_rows<R>(rows, cols, x, o) : f16_rows<R>(rows, cols, x, o);
  }
  for (; r < row_end; ++r) {
    const uint16_t* row = base + r * cols;
    float* o = out + (r - row_begin);
    bf16 ? bf16_rows<1>(row, cols, x, o) : f16_rows<1>(row, cols, x, o);
  }
}

LLAMA_TARGET_AVX512 void half_matmat_rows_avx512(float* out, int64_t out_stride,
                                                 const BlockMatrix& w, const float* x, int64_t ld,
                                                 int64_t n, int64_t row_begin, int64_t row_end) {
  // bf16: 4 rows x 4 vectors (16 sums); f16: 4 rows x 3 vectors (24 sums,
  // row_f16's two per pair: f16_tile).
  if (w.kind == BlockKind::bf16) {
    run_rows<Bf16Tile, 4, 4>(out, out_stride, w, x, ld, n, row_begin, row_end);
  } else {
    run_rows<F16Tile, 4, 3>(out, out_stride, w, x, ld, n, row_begin, row_end);
  }
}

}  // namespace llama::detail
