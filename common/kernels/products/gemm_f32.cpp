// gemm_f32_rows: the batched f32 product Y[t, i] = W[i, :] . X[t, :] (+ R[t, i]),
// GEMM-style, with W read in place (row-major, as decode reads it) and the
// small operand, X, packed instead: per call, each group of kGroupTokens
// tokens is transposed once into X^T [cols, kGroupTokens] (on the avx512
// level at most 64 tokens x cols floats: 192 KiB for a 768-wide input, in L2).
// A micro-tile keeps a few rows x up to 64 tokens in registers: per column it
// broadcasts one weight of each row (straight from W's rows, read front to
// back, which the hardware prefetchers follow) and multiplies it into a
// vector of 16 tokens of X^T. A row tile's weights (rows x cols) stay in L1/L2
// across the token groups, so W comes from memory once per call.
//
// W is not packed: a prompt's weights first arrive from DRAM, and packing
// them into transposed panels would read each panel as many short strided
// row segments. X is small and already in cache.
//
// W is f32, or bf16/f16 (the bf16 and f16 models' exact prefill): a row tile
// of those is first widened exactly into a per-thread f32 [rows, cols] copy
// (each weight once per call, reused for every token), so the sums are the
// f32 product's on the upcast weights, from half the bytes. Every type's next
// row tile is prefetched into L2 while this one's first token slice runs, so
// the widening does not wait on DRAM; the avx512 level widens 16 weights a
// step, avx2 and portable take half.hpp's row conversion at their level.
//
// Each (row, token) sum is one f32 fused multiply-add chain in column order
// starting from zero, then the residual is added once. The blocking (row
// range, token count, threads, tile shapes) therefore never changes a bit.
//
// Kernels per SimdLevel, picked at run time: avx512 (intrinsics,
// gemm_f32_avx512.cpp: tiles of 6 rows x 64 tokens, 24 accumulators; 1 to 4
// tokens of f32 W with 16 rows in the lanes, as decode of a few sequences
// reads W: whole cache lines of each row, not one broadcast weight a load), avx2
// (intrinsics, gemm_f32_avx2.cpp: 6 rows x 16 tokens, 12 accumulators; FMA:
// the same bits as avx512) and portable (plain loops, fused_madd's double
// sums: the same bits but for rare double roundings, in tiles of 4 rows x 16
// tokens).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "kernels/products/gemm_f32_tile.hpp"
#include "llama/kernels/numbers/half.hpp"
#include "llama/kernels/products/gemm_f32.hpp"
#include "llama/kernels/x86/simd_target.hpp"

namespace llama {
namespace {

using detail::gemm::GemmKernels;
using detail::gemm::kGroupTokens;
using detail::gemm::kMaxRows;
using detail::gemm::kMaxVectors;
using detail::gemm::kSliceTokens;
using detail::gemm::MicroTile;
using detail::gemm::PackGroup;
using detail::gemm::prefetch_next;
using detail::gemm::store_transposed;
using detail::gemm::Tile;
using detail::gemm::WidenWeights;

namespace generic {

constexpr int kTileRows = 4;

// f32 [cols, kGroupTokens] <- X[0..tokens, 0..cols) transposed, zero after
// `tokens` up to the next multiple of kSliceTokens.
LLAMA_ALWAYS_INLINE void pack_group(float* xt, const float* x, int64_t ldx, int64_t cols,
                                    int64_t tokens) {
  const int64_t width = (tokens + kSliceTokens - 1) / kSliceTokens * kSliceTokens;
  for (int64_t k = 0; k < cols; ++k) {
    for (int64_t t = 0; t < width; ++t) {
      xt[k * kGroupTokens + t] = t < tokens ? x[t * ldx + k] : 0.0f;
    }
  }
}

// A tile of R rows x kSliceTokens tokens, fused_madd<false>: the sums in
// double (no FMA on the portable level).
template <int R>
LLAMA_ALWAYS_INLINE void micro_tile(const Tile& m) {
  float acc[R][kSliceTokens] = {};
  for (int64_t k = 0; k < m.cols; ++k) {
    if (m.next != nullptr) prefetch_next(m, k);
    const float* x = m.xt + k * kGroupTokens;
    for (int r = 0; r < R; ++r) {
      const float b = m.w[r * m.ldw + k];
      for (int64_t t = 0; t < kSliceTokens; ++t) acc[r][t] = fused_madd<false>(x[t], b, acc[r][t]);
    }
  }
  store_transposed<R>(m, &acc[0][0], kSliceTokens);
}

}  // namespace generic

// The other levels widen with half.hpp's row conversions at their own level
// (F16C's vcvtph2ps on avx2, the scalar conversion on portable): the same
// values as avx512's widen.
template <SimdLevel Level>
void widen_weights_at(GemmWeights type, float* to, const uint16_t* from, int64_t n) {
  const std::span<const uint16_t> in(from, static_cast<size_t>(n));
  const std::span<float> out(to, in.size());
  if (type == GemmWeights::bf16) {
    bf16_to_f32_at_level(Level, in, out);
  } else {
    f16_to_f32_at_level(Level, in, out);
  }
}

// The generic kernels compiled for portable.
void pack_group_portable(float* xt, const float* x, int64_t ldx, int64_t cols, int64_t tokens) {
  generic::pack_group(xt, x, ldx, cols, tokens);
}
template <int R>
void micro_tile_portable(const Tile& m) {
  generic::micro_tile<R>(m);
}

template <template <int> class Tiles, size_t... R>
constexpr GemmKernels make_generic(PackGroup pack, WidenWeights widen, std::index_sequence<R...>) {
  return {pack,
          widen,
          generic::kTileRows,
          1,
          {std::array<MicroTile, kMaxVectors>{Tiles<R + 1>::fn}...}};
}
template <int R>
struct PortableTile {
  static constexpr MicroTile fn = R <= generic::kTileRows ? &micro_tile_portable<R> : nullptr;
};
static_assert(detail::gemm::kAvx2TileRows <= kMaxRows);
// Built on first use (its tiles are in gemm_f32_avx2.cpp, so not constexpr).
const GemmKernels& avx2_kernels() {
  static const GemmKernels kernels = [] {
    GemmKernels k{&detail::gemm::pack_group_avx2,
                  &widen_weights_at<SimdLevel::avx2>,
                  detail::gemm::kAvx2TileRows,
                  1,
                  {}};
    for (int r = 0; r < detail::gemm::kAvx2TileRows; ++r) {
      k.tiles[static_cast<size_t>(r)][0] = detail::gemm::avx2_tiles[r];
    }
    return k;
  }();
  return kernels;
}
constexpr GemmKernels kPortable =
    make_generic<PortableTile>(&pack_group_portable, &widen_weights_at<SimdLevel::portable>,
                               std::make_index_sequence<kMaxRows>{});

const GemmKernels& kernels_for(SimdLevel level) {
  switch (runnable_level(level)) {
    case SimdLevel::avx512:
#if LLAMA_HAVE_X86_TARGETS
      return detail::gemm::avx512_kernels;
#else
      [[fallthrough]];
#endif
    case SimdLevel::avx2:
      return avx2_kernels();
    case SimdLevel::portable:
      break;
  }
  return kPortable;
}

}  // namespace

void gemm_f32_rows(float* y, int64_t ldy, const float* w, const float* x, int64_t ldx, int64_t cols,
                   int64_t tokens, int64_t r0, int64_t r1, const float* residual, int64_t ldr) {
  gemm_f32_rows(simd_level(), y, ldy, w, x, ldx, cols, tokens, r0, r1, residual, ldr);
}

void gemm_f32_rows(SimdLevel level, float* y, int64_t ldy, const float* w, const float* x,
                   int64_t ldx, int64_t cols, int64_t tokens, int64_t r0, int64_t r1,
                   const float* residual, int64_t ldr) {
  gemm_f32_rows(level, y, ldy, GemmWeights::f32, w, x, ldx, cols, tokens, r0, r1, residual, ldr);
}

void gemm_f32_rows(SimdLevel level, float* y, int64_t ldy, GemmWeights type, const void* w,
                   const float* x, int64_t ldx, int64_t cols, int64_t tokens, int64_t r0,
                   int64_t r1, const float* residual, int64_t ldr) {
  const GemmKernels& kernels = kernels_for(level);
  if (type == GemmWeights::f32 && tokens <= detail::gemm::kFewTokens && kernels.few != nullptr) {
    kernels.few(y, ldy, static_cast<const float*>(w), x, ldx, cols, tokens, r0, r1, residual, ldr);
    return;
  }
  const int64_t slice = kSliceTokens * kernels.tile_vectors;  // tokens per tile
  // f32 [groups, cols, kGroupTokens]: X^T of up to two groups (128 tokens),
  // kept per thread so a prompt's products allocate once.
  constexpr int64_t kGroups = 2;
  thread_local std::vector<float> packed;
  const auto need = static_cast<size_t>(kGroups * cols * kGroupTokens + 16);
  if (packed.size() < need) packed.assign(need, 0.0f);
  // 64-byte aligned start inside the vector.
  float* xt = packed.data() + (16 - reinterpret_cast<uintptr_t>(packed.data()) / 4 % 16) % 16;
  // f32 [tile_rows, cols]: a bf16/f16 row tile widened.
  thread_local std::vector<float> wide;
  if (type != GemmWeights::f32 && wide.size() < static_cast<size_t>(kMaxRows * cols)) {
    wide.assign(static_cast<size_t>(kMaxRows * cols), 0.0f);
  }
  const auto* f32_w = static_cast<const float*>(w);
  const auto* half_w = static_cast<const uint16_t*>(w);
  const int64_t elem = type == GemmWeights::f32 ? 4 : 2;  // bytes per weight
  const auto* bytes = static_cast<const char*>(w);

  for (int64_t t0 = 0; t0 < tokens; t0 += kGroups * kGroupTokens) {
    const int64_t nt = std::min(kGroups * kGroupTokens, tokens - t0);
    const int64_t groups = (nt + kGroupTokens - 1) / kGroupTokens;
    for (int64_t g = 0; g < groups; ++g) {
      kernels.pack(xt + g * cols * kGroupTokens, x + (t0 + g * kGroupTokens) * ldx, ldx, cols,
                   std::min(kGroupTokens, nt - g * kGroupTokens));
    }
    // Row tiles outside, tokens inside: a tile's weights are read from memory
    // once and reused from L1/L2 for every token of the block.
    for (int64_t r = r0; r < r1; r += kernels.tile_rows) {
      const int64_t rows = std::min<int64_t>(kernels.tile_rows, r1 - r);
      const float* tile_w = wide.data();
      if (type == GemmWeights::f32) {
        tile_w = f32_w + r * cols;
      } else {
        kernels.widen(type, wide.data(), half_w + r * cols, rows * cols);
      }
      // The next tile comes from memory while this one's first slice runs.
      const char* next = r + rows < r1 ? bytes + (r + rows) * cols * elem : nullptr;
      for (int64_t t = 0; t < nt; t += slice) {
        const int64_t n = std::min(slice, nt - t);
        const int64_t g = t / kGroupTokens;
        const int64_t vectors = (n + kSliceTokens - 1) / kSliceTokens;
        const Tile m{xt + g * cols * kGroupTokens + (t - g * kGroupTokens),
                     tile_w,
                     cols,
                     cols,
                     y + (t0 + t) * ldy + r,
                     ldy,
                     residual ? residual + (t0 + t) * ldr + r : nullptr,
                     ldr,
                     n,
                     t == 0 ? next : nullptr,
                     std::min<int64_t>(kernels.tile_rows, r1 - r - rows),
                     elem,
                     64 / elem - 1};
        kernels.tiles[static_cast<size_t>(rows - 1)][static_cast<size_t>(vectors - 1)](m);
      }
    }
  }
}

}  // namespace llama
