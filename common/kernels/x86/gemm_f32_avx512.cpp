// The avx512 level's kernels of the core's f32 GEMM (gemm_f32.cpp says how it
// is blocked): tiles of up to 6 rows x 64 tokens in 24 zmm accumulators (per
// column one broadcast weight per row times 4 vectors of 16 tokens of X^T),
// X^T packed by 16 x 16 transposes, and bf16/f16 row tiles widened exactly,
// 16 weights a step; for 1 to 4 tokens of f32 W, rows in the lanes instead
// (few_tokens). Here because they are written with intrinsics; the level
// choice stays in gemm_f32.cpp.
//
// Bits: each (row, token) sum is one f32 FMA chain in column order from zero,
// then + residual once, as on the avx2 level.
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>

#include "kernels/products/gemm_f32_tile.hpp"
#include "kernels/x86/simd.hpp"
#include "llama/kernels/x86/avx512_transpose.hpp"
#include "llama/kernels/x86/simd_target.hpp"

namespace llama::detail::gemm {
namespace {

constexpr int kTileRows = 6;  // 6 rows x 4 vectors = 24 accumulators of 32 registers
constexpr int kVectors = kGroupTokens / kSliceTokens;

// The maskz forms throughout (simd.hpp's kFull16): GCC 12 warns about the
// undefined pass-through of the plain ones.
using simd::bf16_widen16;
using simd::kFull16;
using simd::tail_mask;

// f32 [cols, kGroupTokens] <- X[0..tokens, 0..cols) transposed; tokens past
// `tokens` (up to the group's last vector in use) are zero.
LLAMA_TARGET_AVX512 void pack_group(float* xt, const float* x, int64_t ldx, int64_t cols,
                                    int64_t tokens) {
  for (int64_t v = 0; 16 * v < tokens; ++v) {
    const int64_t n = std::min<int64_t>(16, tokens - 16 * v);
    for (int64_t k = 0; k < cols; k += 16) {
      const int64_t kn = std::min<int64_t>(16, cols - k);
      const auto m = static_cast<__mmask16>((uint32_t{1} << kn) - 1u);
      __m512 b[16];
#pragma GCC unroll 16
      for (int64_t i = 0; i < 16; ++i) {
        b[i] = i < n ? _mm512_maskz_loadu_ps(m, x + (16 * v + i) * ldx + k) : _mm512_setzero_ps();
      }
      ::llama::detail::avx512::transpose16(b);
      for (int64_t j = 0; j < kn; ++j) _mm512_store_ps(xt + (k + j) * kGroupTokens + 16 * v, b[j]);
    }
  }
}

// f32 [n] <- bf16 or f16 [n], exactly: bf16 by a 16-bit shift, f16 by
// vcvtph2ps (llama::f16_to_f32's values, half.hpp), 16 weights a step.
template <GemmWeights Type>
LLAMA_TARGET_AVX512 void widen(float* to, const uint16_t* from, int64_t n) {
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = tail_mask(n - i);
    const __m256i h = _mm256_maskz_loadu_epi16(m, from + i);
    __m512 f;
    if constexpr (Type == GemmWeights::bf16) {
      f = bf16_widen16(kFull16, h);
    } else {
      f = _mm512_maskz_cvtph_ps(kFull16, h);
    }
    _mm512_mask_storeu_ps(to + i, m, f);
  }
}
LLAMA_TARGET_AVX512 void widen_weights(GemmWeights type, float* to, const uint16_t* from,
                                       int64_t n) {
  if (type == GemmWeights::bf16) {
    widen<GemmWeights::bf16>(to, from, n);
  } else {
    widen<GemmWeights::f16>(to, from, n);
  }
}

template <int R, int V>
LLAMA_TARGET_AVX512 void micro_tile(const Tile& m) {
  __m512 acc[R][V];
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) acc[r][v] = _mm512_setzero_ps();
  }
  const float* w[R];
  for (int r = 0; r < R; ++r) w[r] = m.w + r * m.ldw;
  const float* xt = m.xt;
  for (int64_t k = 0; k < m.cols; ++k, xt += kGroupTokens) {
    if (m.next != nullptr) prefetch_next(m, k);
    __m512 x[V];
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) x[v] = _mm512_load_ps(xt + 16 * v);
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) {
      const __m512 b = _mm512_set1_ps(w[r][k]);
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v) acc[r][v] = _mm512_fmadd_ps(x[v], b, acc[r][v]);
    }
  }
  alignas(64) float s[R * 16 * V];  // f32 [R, 16 V]
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) _mm512_store_ps(s + r * 16 * V + 16 * v, acc[r][v]);
  }
  store_transposed<R>(m, s, 16 * V);
}

// A few tokens (decode of a few sequences): rows in the lanes instead of
// tokens. 16 rows' next 16 columns are loaded and transposed, so lane i of
// column j holds W[row i][k + j]; each token's accumulator then takes column
// after column, FMA by FMA: row i's chain in column order, the tiles' bits.
// Every load reads a whole cache line of a row, where the tiles broadcast one
// weight a load. One block of 16 rows a pass: two (32 row streams, two chains
// per token against the FMA latency) ran slower at every token count, since
// decode waits on memory, and the more streams the less the prefetchers follow.
// Floats ahead of a row's loads its prefetch asks for (64 and 32 measured
// alike, 128 slower, none slower still).
constexpr int64_t kFewAhead = 64;
template <int T>
LLAMA_TARGET_AVX512 void few_tokens(float* y, int64_t ldy, const float* w, const float* x,
                                    int64_t ldx, int64_t cols, int64_t r0, int64_t r1,
                                    const float* residual, int64_t ldr) {
  for (int64_t r = r0; r < r1; r += 16) {
    const int64_t rows = std::min<int64_t>(16, r1 - r);
    __m512 acc[T];
    for (int t = 0; t < T; ++t) acc[t] = _mm512_setzero_ps();
    for (int64_t k = 0; k < cols; k += 16) {
      const int64_t kn = std::min<int64_t>(16, cols - k);
      const __mmask16 m = tail_mask(kn);
      __m512 c[16];
#pragma GCC unroll 16
      for (int i = 0; i < 16; ++i) {
        const float* row = w + (r + i) * cols;
        if (i < rows) _mm_prefetch(reinterpret_cast<const char*>(row + k + kFewAhead), _MM_HINT_T0);
        c[i] = i < rows ? _mm512_maskz_loadu_ps(m, row + k) : _mm512_setzero_ps();
      }
      ::llama::detail::avx512::transpose16(c);
      if (kn == 16) {
#pragma GCC unroll 16
        for (int j = 0; j < 16; ++j) {
#pragma GCC unroll 4
          for (int t = 0; t < T; ++t)
            acc[t] = _mm512_fmadd_ps(_mm512_set1_ps(x[t * ldx + k + j]), c[j], acc[t]);
        }
      } else {
        for (int j = 0; j < kn; ++j) {
          for (int t = 0; t < T; ++t)
            acc[t] = _mm512_fmadd_ps(_mm512_set1_ps(x[t * ldx + k + j]), c[j], acc[t]);
        }
      }
    }
    const __mmask16 m = tail_mask(rows);
    for (int t = 0; t < T; ++t) {
      __m512 v = acc[t];
      if (residual != nullptr)
        v = _mm512_add_ps(_mm512_maskz_loadu_ps(m, residual + t * ldr + r), v);
      _mm512_mask_storeu_ps(y + t * ldy + r, m, v);
    }
  }
}

LLAMA_TARGET_AVX512 void few_tokens_any(float* y, int64_t ldy, const float* w, const float* x,
                                        int64_t ldx, int64_t cols, int64_t tokens, int64_t r0,
                                        int64_t r1, const float* residual, int64_t ldr) {
  switch (tokens) {
    case 1:
      return few_tokens<1>(y, ldy, w, x, ldx, cols, r0, r1, residual, ldr);
    case 2:
      return few_tokens<2>(y, ldy, w, x, ldx, cols, r0, r1, residual, ldr);
    case 3:
      return few_tokens<3>(y, ldy, w, x, ldx, cols, r0, r1, residual, ldr);
    default:
      return few_tokens<4>(y, ldy, w, x, ldx, cols, r0, r1, residual, ldr);
  }
}

template <int R, size_t... V>
constexpr std::array<MicroTile, kMaxVectors> tile_row(std::index_sequence<V...>) {
  return {&micro_tile<R, static_cast<int>(V + 1)>...};
}
template <size_t... R>
constexpr GemmKernels make_kernels(std::index_sequence<R...>) {
  return {&pack_group,
          &widen_weights,
          kTileRows,
          kVectors,
          {tile_row<static_cast<int>(R + 1)>(std::make_index_sequence<kMaxVectors>{})...},
          &few_tokens_any};
}

}  // namespace

constinit const GemmKernels avx512_kernels = make_kernels(std::make_index_sequence<kMaxRows>{});

}  // namespace llama::detail::gemm
