// AVX-512 kernels for bf16/f16 weights read in place: decode's matrix-vector
// rows (per row 16 f32 lanes of fused multiply-adds in column order, then the
// pairwise horizontal sum, whatever the number of rows per pass), and the
// rounding of activations to bf16 for the fast path (whose products oneDNN
// runs: half_products_onednn.cpp). Exact batches run the core's f32 GEMM
// instead (gemm_f32.hpp).
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "kernels/products/half_kernels.hpp"
#include "kernels/x86/simd.hpp"
#include "llama/kernels/x86/avx512_transpose.hpp"
#include "llama/kernels/x86/simd_target.hpp"

#define LLAMA_TARGET_AVX512_BF16                                                     \
  __attribute__((                                                                    \
      target("avx512f,avx512bw,avx512vl,avx512dq,avx512cd,avx512bf16,avx2,fma,f16c," \
             "bmi,bmi2,lzcnt,movbe,popcnt")))

namespace llama::detail {
namespace {

// Bytes a decode pass prefetches ahead of where it reads, in address order:
// the matrices stream from DRAM, and 16 KiB keeps the pass nearest a plain
// read's rate. Less leaves it waiting on memory, and more, or prefetching the
// next rows at the same column instead, streams more slowly.
constexpr int64_t kDecodePrefetch = 16384;
// Into L2 (T2), not L1 (T0): an L1 prefetch holds a fill buffer until its line
// arrives, one to L2 frees it for the loads. T1, NTA and no prefetch at all
// stream more slowly too.
constexpr auto kDecodeHint = _MM_HINT_T2;
// The masked (maskz, all lanes) forms of the shift and widening intrinsics
// throughout (simd.hpp's kFull16). Decode's horizontal sum is simd.hpp's
// hsum, pairwise in its order.
using simd::bf16_widen16;
using simd::hsum;
using simd::kFull16;
using simd::tail_mask;

// Decode: rows [row_begin, row_end) of W x into out[r - row_begin], R rows at a
// time so each 16 values of x are loaded once for R rows and R independent
// FMA chains overlap. R interleaved row streams defeat the hardware
// prefetcher, so each 32-value step, which reads one cache line of each of
// the R rows, prefetches R lines into L2 in address order kDecodePrefetch
// bytes ahead of the pass's linear position: the R rows are contiguous, so the
// prefetches sweep the block's bytes once, in order, a fixed distance ahead
// (into the next rows, the next block, the next matrix). Per row the same
// lanes and order for every R: bf16 one accumulator over 16-value steps, f16
// two over 32-value steps (the tail into the first).
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
      acc[r] = _mm512_fmadd_ps(
          bf16_widen16(kFull16, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))), x0,
          acc[r]);
      acc[r] = _mm512_fmadd_ps(
          bf16_widen16(kFull16, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 16))), x1,
          acc[r]);
    }
  }
  for (; k < cols; k += 16) {
    const __mmask16 m = tail_mask(cols - k);
    const __m512 xv = _mm512_maskz_loadu_ps(m, x + k);
    for (int r = 0; r < R; ++r) {
      const __m512 wv = bf16_widen16(m, _mm256_maskz_loadu_epi16(m, w + r * cols + k));
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
          _mm512_maskz_cvtph_ps(kFull16, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))),
          x0, a0[r]);
      a1[r] = _mm512_fmadd_ps(
          _mm512_maskz_cvtph_ps(kFull16,
                                _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 16))),
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

// The 16 f32 values a bf16 vector's low (High false) or high 16 lanes hold.
template <bool High>
LLAMA_TARGET_AVX512_BF16 inline __m512 bf16_half(__m512i v) {
  // The maskz form: GCC 12 warns the plain one's (and the cast's) undefined source
  // "may be used uninitialized".
  const __m256i h = _mm512_maskz_extracti64x4_epi64(0xff, v, High ? 1 : 0);
  return bf16_widen16(kFull16, h);
}

// Plane `plane` of token t's columns [kb * 32, kb * 32 + 32) as bf16 pairs:
// lane i holds columns 2i, 2i + 1 (zero past cols). Plane 0 is the values
// rounded to bf16 (nearest even), plane 1 what plane 0 left of them rounded,
// plane 2 what planes 0 and 1 left: each remainder is exact in f32, and the
// three planes sum to the values exactly (8 significant bits each) unless a
// remainder falls below bf16's normal range, which the conversion flushes.
LLAMA_TARGET_AVX512_BF16 inline __m512i rounded_pairs(const float* row, int64_t cols, int64_t kb,
                                                      int plane) {
  const int64_t k = kb * 32;
  __m512 lo = _mm512_maskz_loadu_ps(tail_mask(std::max<int64_t>(cols - k, 0)), row + k);
  __m512 hi = _mm512_maskz_loadu_ps(tail_mask(std::max<int64_t>(cols - k - 16, 0)), row + k + 16);
  __m512i v = (__m512i)_mm512_cvtne2ps_pbh(hi, lo);
  for (int p = 0; p < plane; ++p) {
    lo = _mm512_sub_ps(lo, bf16_half<false>(v));
    hi = _mm512_sub_ps(hi, bf16_half<true>(v));
    v = (__m512i)_mm512_cvtne2ps_pbh(hi, lo);
  }
  return v;
}

LLAMA_TARGET_AVX512_BF16 void round_to_bf16_tiles(const float* x, int64_t ld, int64_t cols,
                                                  int64_t t_begin, int64_t t_end, uint16_t* out,
                                                  int64_t kbs, int planes, int64_t plane_values) {
  const __m512i column =
      _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                         _mm512_set1_epi32(16));
  for (int plane = 0; plane < planes; ++plane) {
    uint16_t* base = out + plane * plane_values;
    for (int64_t b = t_begin / 16; b * 16 < t_end; ++b) {
      const int64_t first = std::max(t_begin, b * 16), last = std::min(t_end, b * 16 + 16);
      for (int64_t kb = 0; kb < kbs; ++kb) {
        uint16_t* tile = base + (b * kbs + kb) * 512;  // [16 pairs][16 tokens][2]
        if (last - first == 16) {
          // A whole block: its 16 tokens' pairs, transposed into the tile's rows.
          __m512i v[16];
          for (int i = 0; i < 16; ++i) v[i] = rounded_pairs(x + (first + i) * ld, cols, kb, plane);
          avx512::transpose16(v);
          for (int i = 0; i < 16; ++i) _mm512_storeu_si512(tile + i * 32, v[i]);
          continue;
        }
        // Part of a block (the rest is another range's, or past the batch):
        // each token's pairs scattered into its column of the tile.
        for (int64_t t = first; t < last; ++t) {
          const __m512i idx =
              _mm512_add_epi32(column, _mm512_set1_epi32(static_cast<int>(t - b * 16)));
          _mm512_i32scatter_epi32(tile, idx, rounded_pairs(x + t * ld, cols, kb, plane), 4);
        }
      }
    }
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

}  // namespace llama::detail
