// Private to gemm_f32*.cpp: the operands of one micro-tile of the core's f32
// GEMM (gemm_f32.cpp says how it is blocked), the helpers every level's tile
// shares and the table of one level's kernels, so each level's kernels can
// live in a file of their own.
#pragma once

#include <array>
#include <cstdint>

#include "llama/kernels/products/gemm_f32.hpp"
#include "llama/kernels/x86/simd_target.hpp"

namespace llama::detail::gemm {

inline constexpr int64_t kGroupTokens = 64;  // tokens per packed X^T group (its row stride)
inline constexpr int64_t kSliceTokens = 16;  // tokens per slice a tile is dispatched by

// The operands of one micro-tile.
struct Tile {
  const float* xt;  // f32 [cols, kGroupTokens] (X^T of the group), at the tile's first token
  const float* w;   // f32 [rows, ldw]: the tile's first row of W
  int64_t ldw;      // = cols
  int64_t cols;
  float* y;  // f32 [tokens, ldy], at the tile's first token and row
  int64_t ldy;
  const float* residual;  // f32 [tokens, ldr] at the same place, or null
  int64_t ldr;
  int64_t tokens;  // valid tokens, at most the tile's width (the rest of X^T is zero)
  // The next row tile's first row (f32, bf16 or f16; its rows cols elements
  // apart) to request into L2 while this one runs, or null: otherwise the
  // next tile's first reads (its widening, or its first token slice) wait on
  // DRAM, in as many streams as rows.
  const char* next;
  int64_t next_rows;
  int64_t next_elem;  // bytes per weight of the next tile: 4 or 2
  int64_t next_mask;  // 64 / next_elem - 1: columns k with k & mask == 0 start a cache line
};

// At the columns k that start a cache line of the next tile's rows
// (every 16 columns for f32, 32 for bf16/f16), requests that line of each row.
LLAMA_ALWAYS_INLINE void prefetch_next(const Tile& m, int64_t k) {
  if ((k & m.next_mask) != 0) return;
  const int64_t row_bytes = m.cols * m.next_elem;
  for (int64_t r = 0; r < m.next_rows; ++r) {
    __builtin_prefetch(m.next + r * row_bytes + k * m.next_elem, 0, 2);
  }
}

// Writes one tile's sums s (f32 [R, width], row-major) to y, transposed:
// y[t, r] = s[r, t] (+ residual[t, r]) for the valid tokens.
template <int R>
LLAMA_ALWAYS_INLINE void store_transposed(const Tile& m, const float* s, int64_t width) {
  for (int64_t t = 0; t < m.tokens; ++t) {
    float* y = m.y + t * m.ldy;
    const float* res = m.residual ? m.residual + t * m.ldr : nullptr;
    for (int r = 0; r < R; ++r) {
      const float v = s[r * width + t];
      y[r] = res ? res[r] + v : v;
    }
  }
}

using MicroTile = void (*)(const Tile&);
// f32 [cols, kGroupTokens] <- X[0..tokens, 0..cols) transposed, zero after the
// tokens up to the level's tile width.
using PackGroup = void (*)(float* xt, const float* x, int64_t ldx, int64_t cols, int64_t tokens);
// f32 [n] <- bf16/f16 [n], exactly.
using WidenWeights = void (*)(GemmWeights type, float* to, const uint16_t* from, int64_t n);
inline constexpr int kMaxRows = 6, kMaxVectors = kGroupTokens / kSliceTokens;

// f32 W only, 1 to kFewTokens tokens: Y rows [r0, r1) as the tiles compute
// them (each (row, token) one FMA chain in column order), without packing X.
using FewTokens = void (*)(float* y, int64_t ldy, const float* w, const float* x, int64_t ldx,
                           int64_t cols, int64_t tokens, int64_t r0, int64_t r1,
                           const float* residual, int64_t ldr);
inline constexpr int64_t kFewTokens = 4;

// One level's kernels: tiles[r - 1][v - 1] takes r rows x v slices of 16 tokens;
// few (where not null) takes the calls of f32 W with at most kFewTokens tokens.
struct GemmKernels {
  PackGroup pack;
  WidenWeights widen;
  int tile_rows;
  int tile_vectors;
  std::array<std::array<MicroTile, kMaxVectors>, kMaxRows> tiles;
  FewTokens few = nullptr;
};

// The avx512 level's kernels (gemm_f32_avx512.cpp): tiles of up to 6 rows x
// 4 slices of 16 tokens.
extern const GemmKernels avx512_kernels;

// The avx2 level's tiles (gemm_f32_avx2.cpp): avx2_tiles[r - 1] takes r rows
// (1..kAvx2TileRows) x one slice of kSliceTokens tokens.
inline constexpr int kAvx2TileRows = 6;
extern const MicroTile avx2_tiles[kAvx2TileRows];
// f32 [cols, kGroupTokens] <- X[0..tokens, 0..cols) transposed, zero after
// `tokens` up to the next multiple of kSliceTokens; AVX2.
void pack_group_avx2(float* xt, const float* x, int64_t ldx, int64_t cols, int64_t tokens);

}  // namespace llama::detail::gemm
