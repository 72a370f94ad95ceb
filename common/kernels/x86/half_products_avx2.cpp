// AVX2 kernels for bf16/f16 weights read in place: decode's matrix-vector
// rows at the avx2 level (an x86-64-v3 CPU, or LLAMA_CPU_LEVEL=avx2), every
// result half_products_avx512.cpp's bit for bit: its 16 f32 lanes held as two
// ymm, lane for lane the same fused multiply-adds in the same order (bf16: one
// accumulator over 16-value steps; f16: two over 32-value steps, the tail into
// the first), the same zero padding past the columns and the same pairwise
// horizontal sum.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "kernels/products/half_kernels.hpp"
#include "kernels/x86/simd.hpp"
#include "llama/kernels/x86/simd_target.hpp"

namespace llama::detail {
namespace {

// As half_products_avx512.cpp, for the reasons given there: 16 KiB ahead, into L2.
constexpr int64_t kDecodePrefetch = 16384;
constexpr auto kDecodeHint = _MM_HINT_T2;

// The avx512 kernels' hsum over the 16 lanes lo (0..7) and hi (8..15):
// t[i] += t[i + 8], then + 4, + 2, + 1.
LLAMA_TARGET_AVX2 inline float hsum(__m256 lo, __m256 hi) {
  alignas(32) float t[8];
  _mm256_store_ps(t, _mm256_add_ps(lo, hi));
  for (int w = 4; w > 0; w /= 2) {
    for (int i = 0; i < w; ++i) t[i] += t[i + w];
  }
  return t[0];
}

// 8 bf16 to f32 exactly: a 16-bit shift.
LLAMA_TARGET_AVX2 inline __m256 bf16_8(const uint16_t* p) {
  return simd::bf16_widen8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

// 8 f16 to f32 exactly (vcvtph2ps, F16C).
LLAMA_TARGET_AVX2 inline __m256 f16_8(const uint16_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

// The last cols % 16 values, zero-padded to 16 (the avx512 kernels' masked
// lanes: zero weights times zero inputs), for one row and for x.
struct Tail {
  int64_t k = 0;                 // first column of the tail
  alignas(32) float x[16] = {};  // f32 [16]
};
Tail make_tail(const float* x, int64_t cols) {
  Tail t;
  t.k = cols / 16 * 16;
  std::memcpy(t.x, x + t.k, static_cast<size_t>(cols - t.k) * sizeof(float));
  return t;
}
LLAMA_TARGET_AVX2 inline void tail_weights(const uint16_t* row, int64_t cols, const Tail& t,
                                           uint16_t* out /* [16] */) {
  std::memset(out, 0, 16 * sizeof(uint16_t));
  std::memcpy(out, row + t.k, static_cast<size_t>(cols - t.k) * sizeof(uint16_t));
}

// R rows at a time sharing each load of x, prefetching as
// half_products_avx512.cpp's bf16_rows does (R lines per 32-value step in
// address order, kDecodePrefetch bytes ahead). Per row: lanes 0..7 in
// acc[r][0], 8..15 in acc[r][1], one FMA per 16 values as there.
template <int R>
LLAMA_TARGET_AVX2 void bf16_rows(const uint16_t* w, int64_t cols, const float* x, const Tail& tail,
                                 float* out) {
  __m256 acc[R][2];
  for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_ps();
  // An address, not a pointer: it may run past the matrix (a hint, no fault).
  uintptr_t ahead = reinterpret_cast<uintptr_t>(w) + kDecodePrefetch;
  int64_t k = 0;
  for (; k + 32 <= cols; k += 32, ahead += R * 64) {
    for (int r = 0; r < R; ++r)
      _mm_prefetch(reinterpret_cast<const char*>(ahead + r * 64), kDecodeHint);
    const __m256 x0 = _mm256_loadu_ps(x + k), x1 = _mm256_loadu_ps(x + k + 8);
    const __m256 x2 = _mm256_loadu_ps(x + k + 16), x3 = _mm256_loadu_ps(x + k + 24);
    for (int r = 0; r < R; ++r) {
      const uint16_t* p = w + r * cols + k;
      acc[r][0] = _mm256_fmadd_ps(bf16_8(p), x0, acc[r][0]);
      acc[r][1] = _mm256_fmadd_ps(bf16_8(p + 8), x1, acc[r][1]);
      acc[r][0] = _mm256_fmadd_ps(bf16_8(p + 16), x2, acc[r][0]);
      acc[r][1] = _mm256_fmadd_ps(bf16_8(p + 24), x3, acc[r][1]);
    }
  }
  for (; k < tail.k; k += 16) {
    const __m256 x0 = _mm256_loadu_ps(x + k), x1 = _mm256_loadu_ps(x + k + 8);
    for (int r = 0; r < R; ++r) {
      const uint16_t* p = w + r * cols + k;
      acc[r][0] = _mm256_fmadd_ps(bf16_8(p), x0, acc[r][0]);
      acc[r][1] = _mm256_fmadd_ps(bf16_8(p + 8), x1, acc[r][1]);
    }
  }
  if (k < cols) {
    const __m256 x0 = _mm256_load_ps(tail.x), x1 = _mm256_load_ps(tail.x + 8);
    for (int r = 0; r < R; ++r) {
      uint16_t p[16];  // bf16 [16]
      tail_weights(w + r * cols, cols, tail, p);
      acc[r][0] = _mm256_fmadd_ps(bf16_8(p), x0, acc[r][0]);
      acc[r][1] = _mm256_fmadd_ps(bf16_8(p + 8), x1, acc[r][1]);
    }
  }
  for (int r = 0; r < R; ++r) out[r] = hsum(acc[r][0], acc[r][1]);
}

// f16: the avx512 f16_rows' two accumulators (a0 for the first 16 values of
// each 32-value step and for the tail, a1 for the second 16), each as two ymm.
template <int R>
LLAMA_TARGET_AVX2 void f16_rows(const uint16_t* w, int64_t cols, const float* x, const Tail& tail,
                                float* out) {
  __m256 a0[R][2], a1[R][2];
  for (int r = 0; r < R; ++r) a0[r][0] = a0[r][1] = a1[r][0] = a1[r][1] = _mm256_setzero_ps();
  uintptr_t ahead = reinterpret_cast<uintptr_t>(w) + kDecodePrefetch;
  int64_t k = 0;
  for (; k + 32 <= cols; k += 32, ahead += R * 64) {
    for (int r = 0; r < R; ++r)
      _mm_prefetch(reinterpret_cast<const char*>(ahead + r * 64), kDecodeHint);
    for (int r = 0; r < R; ++r) {
      const uint16_t* p = w + r * cols + k;
      a0[r][0] = _mm256_fmadd_ps(f16_8(p), _mm256_loadu_ps(x + k), a0[r][0]);
      a0[r][1] = _mm256_fmadd_ps(f16_8(p + 8), _mm256_loadu_ps(x + k + 8), a0[r][1]);
      a1[r][0] = _mm256_fmadd_ps(f16_8(p + 16), _mm256_loadu_ps(x + k + 16), a1[r][0]);
      a1[r][1] = _mm256_fmadd_ps(f16_8(p + 24), _mm256_loadu_ps(x + k + 24), a1[r][1]);
    }
  }
  for (; k < tail.k; k += 16) {
    for (int r = 0; r < R; ++r) {
      const uint16_t* p = w + r * cols + k;
      a0[r][0] = _mm256_fmadd_ps(f16_8(p), _mm256_loadu_ps(x + k), a0[r][0]);
      a0[r][1] = _mm256_fmadd_ps(f16_8(p + 8), _mm256_loadu_ps(x + k + 8), a0[r][1]);
    }
  }
  if (k < cols) {
    const __m256 x0 = _mm256_load_ps(tail.x), x1 = _mm256_load_ps(tail.x + 8);
    for (int r = 0; r < R; ++r) {
      uint16_t p[16];  // f16 [16]
      tail_weights(w + r * cols, cols, tail, p);
      a0[r][0] = _mm256_fmadd_ps(f16_8(p), x0, a0[r][0]);
      a0[r][1] = _mm256_fmadd_ps(f16_8(p + 8), x1, a0[r][1]);
    }
  }
  for (int r = 0; r < R; ++r) {
    out[r] = hsum(_mm256_add_ps(a0[r][0], a1[r][0]), _mm256_add_ps(a0[r][1], a1[r][1]));
  }
}

}  // namespace

LLAMA_TARGET_AVX2 void half_matvec_rows_avx2(float* out, const BlockMatrix& w, const float* x,
                                             int64_t row_begin, int64_t row_end) {
  // 4 rows: 8 accumulators for bf16; f16's 16 fill the 16 ymm registers,
  // so it takes 3 (12) and leaves room for the conversions.
  constexpr int kBf16Rows = 4, kF16Rows = 3;
  const int64_t cols = w.cols;
  const auto* base = reinterpret_cast<const uint16_t*>(w.bytes.data());
  const Tail tail = make_tail(x, cols);
  int64_t r = row_begin;
  if (w.kind == BlockKind::bf16) {
    for (; r + kBf16Rows <= row_end; r += kBf16Rows) {
      bf16_rows<kBf16Rows>(base + r * cols, cols, x, tail, out + (r - row_begin));
    }
    for (; r < row_end; ++r) bf16_rows<1>(base + r * cols, cols, x, tail, out + (r - row_begin));
  } else {
    for (; r + kF16Rows <= row_end; r += kF16Rows) {
      f16_rows<kF16Rows>(base + r * cols, cols, x, tail, out + (r - row_begin));
    }
    for (; r < row_end; ++r) f16_rows<1>(base + r * cols, cols, x, tail, out + (r - row_begin));
  }
}

}  // namespace llama::detail
