// The avx2 level's kernels of the core's f32 GEMM (gemm_f32.cpp): tiles of up
// to 6 rows x 16 tokens in 12 ymm accumulators (two vectors of 8 tokens per
// row), per column one load of each 8-token half of X^T and one broadcast of
// each row's weight: 12 FMAs for 8 loads, so the two FMA ports set the pace.
//
// Written with intrinsics because the plain loops they replace (4 rows x 16
// tokens of fused_madd) came out of GCC 12 as 128-bit SLP code with shuffles
// and the accumulators spilled to the stack each column: graph's f32 prefill
// at LLAMA_CPU_LEVEL=avx2 ran 1/22 of the avx512 level's.
//
// Bits: each (row, token) sum is one f32 FMA chain in column order from
// zero, then + residual once, as on the avx512 level: the same bits.
#include <immintrin.h>

#include <cstdint>

#include "kernels/products/gemm_f32_tile.hpp"
#include "llama/kernels/x86/simd_target.hpp"

namespace llama::detail::gemm {
namespace {

template <int R>
LLAMA_TARGET_AVX2 void micro_tile(const Tile& m) {
  __m256 acc[R][2];
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_ps();
  const float* w[R];
  for (int r = 0; r < R; ++r) w[r] = m.w + r * m.ldw;
  const float* xt = m.xt;
  for (int64_t k = 0; k < m.cols; ++k, xt += kGroupTokens) {
    if (m.next != nullptr) prefetch_next(m, k);
    const __m256 x0 = _mm256_load_ps(xt), x1 = _mm256_load_ps(xt + 8);
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) {
      const __m256 b = _mm256_broadcast_ss(w[r] + k);
      acc[r][0] = _mm256_fmadd_ps(x0, b, acc[r][0]);
      acc[r][1] = _mm256_fmadd_ps(x1, b, acc[r][1]);
    }
  }
  alignas(32) float s[R * kSliceTokens];  // f32 [R, 16]
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r) {
    _mm256_store_ps(s + r * kSliceTokens, acc[r][0]);
    _mm256_store_ps(s + r * kSliceTokens + 8, acc[r][1]);
  }
  store_transposed<R>(m, s, kSliceTokens);
}

}  // namespace

const MicroTile avx2_tiles[kAvx2TileRows] = {&micro_tile<1>, &micro_tile<2>, &micro_tile<3>,
                                             &micro_tile<4>, &micro_tile<5>, &micro_tile<6>};

// The transposition is tokens x cols once per group against rows x that in
// the tiles: plain loops are enough.
LLAMA_TARGET_AVX2 void pack_group_avx2(float* xt, const float* x, int64_t ldx, int64_t cols,
                                       int64_t tokens) {
  const int64_t width = (tokens + kSliceTokens - 1) / kSliceTokens * kSliceTokens;
  for (int64_t k = 0; k < cols; ++k) {
    for (int64_t t = 0; t < width; ++t) {
      xt[k * kGroupTokens + t] = t < tokens ? x[t * ldx + k] : 0.0f;
    }
  }
}

}  // namespace llama::detail::gemm
