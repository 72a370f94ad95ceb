// matmul_rows: the batched f32 product Y[t, i] = W[i, :] . X[t, :] (+ R[t, i]),
// GEMM-style. Columns are split into blocks of kDepth; per block, kPanelRows
// rows of W are packed column-major (one 48-float column per k) and reused
// from L1/L2 across every token, while the X block (tokens x kDepth, at most
// 192 KiB for 128 tokens) stays in L2 across the panels. A micro-tile keeps
// kTileTokens tokens x kPanelRows rows in registers and broadcasts X. W itself
// is read from memory once per call.
//
// Each (row, token) sum is one f32 fused multiply-add chain in column order
// starting from zero (partial sums between column blocks are stored as f32, so
// the chain is unchanged), then the residual is added once. The blocking (row
// range, token count, threads) therefore never changes a bit.
//
// W is f32, or bf16/f16 widened exactly while its panels are packed (the
// bf16 and f16 models' exact prefill: the same sums as on the f32 copy of the
// upcast weights, from half the bytes).
//
// Kernels per SimdLevel, picked at run time: avx512 (intrinsics: 16-float
// vectors, a 16 x 16 transpose to pack), and the plain loops compiled for
// avx2 (FMA: the same bits as avx512) and portable (fused_madd's double sums:
// the same bits but for rare double roundings).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "kernels.hpp"
#include "llama/kernels/half.hpp"
#include "llama/kernels/simd_target.hpp"

#if LLAMA_HAVE_X86_TARGETS
#include <immintrin.h>
#endif

namespace llama::graph {
namespace {

constexpr int64_t kPanelRows = kMatmulPanelRows;  // rows of W per packed panel
constexpr int64_t kVectors = kPanelRows / 16;     // AVX-512 vectors of them
static_assert(kPanelRows % 16 == 0);
constexpr int64_t kTileTokens = 8;  // tokens per micro-tile: 3 x 8 = 24 accumulators
constexpr int64_t kDepth = 384;     // columns per block: a 72 KiB panel, on the stack

// The operands of one micro-tile: tokens [0, NR) of x/y/residual (already
// offset to the tile's first token, row and column), `rows` <= kPanelRows valid.
struct Tile {
  const float* panel;  // f32 [depth, kPanelRows], packed; rows >= `rows` are zero
  int64_t depth;
  const float* x;  // f32 [NR, ldx]
  int64_t ldx;
  float* y;  // f32 [NR, ldy]: partial sums in, sums (plus residual when last) out
  int64_t ldy;
  const float* residual;  // f32 [NR, ldr], added after the last column block, or null
  int64_t ldr;
  int64_t rows;
  bool first;  // first column block: start from zero, not from y
};

// Requests the panel packed after (p, k0) -- further rows in this column block,
// else the first rows of the next block -- so it arrives from memory while
// this one is in use (W's short row segments defeat the hardware prefetcher).
template <typename T>
void prefetch_next_panel(const T* w, int64_t cols, int64_t r0, int64_t r1, int64_t p, int64_t k0) {
  constexpr int64_t kLine = 64 / sizeof(T);  // values per cache line
  const bool same_block = p + kPanelRows < r1;
  const int64_t np = same_block ? p + kPanelRows : r0;
  const int64_t nk = same_block ? k0 : k0 + kDepth;
  if (nk >= cols) return;
  const int64_t rows = std::min(kPanelRows, r1 - np), depth = std::min(kDepth, cols - nk);
  for (int64_t r = 0; r < rows; ++r) {
    const T* row = w + (np + r) * cols + nk;
    for (int64_t k = 0; k < depth; k += kLine) __builtin_prefetch(row + k, 0, 2);
  }
}

#if LLAMA_HAVE_X86_TARGETS
namespace avx512 {

// The maskz forms throughout: GCC 12 warns about the undefined pass-through of the plain ones.
constexpr __mmask16 kAll = 0xFFFF;

template <int Imm>
LLAMA_TARGET_AVX512 inline __m512 shuffle_lanes(__m512 a, __m512 b) {
  return _mm512_maskz_shuffle_f32x4(kAll, a, b, Imm);
}

LLAMA_TARGET_AVX512 inline __m512 lo_pd(__m512 a, __m512 b) {
  return _mm512_castpd_ps(_mm512_maskz_unpacklo_pd(0xFF, _mm512_castps_pd(a), _mm512_castps_pd(b)));
}
LLAMA_TARGET_AVX512 inline __m512 hi_pd(__m512 a, __m512 b) {
  return _mm512_castpd_ps(_mm512_maskz_unpackhi_pd(0xFF, _mm512_castps_pd(a), _mm512_castps_pd(b)));
}

// In place: r[i] holds row i of a 16 x 16 block, afterwards column i. Three
// rounds: a 4 x 4 transpose inside each 128-bit lane, then the lanes.
LLAMA_TARGET_AVX512 inline void transpose16(__m512 r[16]) {
  __m512 t[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_maskz_unpacklo_ps(kAll, r[i], r[i + 1]);
    t[i + 1] = _mm512_maskz_unpackhi_ps(kAll, r[i], r[i + 1]);
  }
  for (int i = 0; i < 16; i += 4) {  // r[i + j], lane L: rows i..i+3 of column 4L + j
    r[i] = lo_pd(t[i], t[i + 2]);
    r[i + 1] = hi_pd(t[i], t[i + 2]);
    r[i + 2] = lo_pd(t[i + 1], t[i + 3]);
    r[i + 3] = hi_pd(t[i + 1], t[i + 3]);
  }
  for (int j = 0; j < 4; ++j) {
    t[j] = shuffle_lanes<0x88>(r[j], r[4 + j]);
    t[4 + j] = shuffle_lanes<0xdd>(r[j], r[4 + j]);
    t[8 + j] = shuffle_lanes<0x88>(r[8 + j], r[12 + j]);
    t[12 + j] = shuffle_lanes<0xdd>(r[8 + j], r[12 + j]);
  }
  for (int j = 0; j < 4; ++j) {
    r[j] = shuffle_lanes<0x88>(t[j], t[8 + j]);
    r[8 + j] = shuffle_lanes<0xdd>(t[j], t[8 + j]);
    r[4 + j] = shuffle_lanes<0x88>(t[4 + j], t[12 + j]);
    r[12 + j] = shuffle_lanes<0xdd>(t[4 + j], t[12 + j]);
  }
}

// The kn (<= 16) values at p as f32, zeros after: f32 as is, bf16 shifted,
// f16 converted (exact widenings).
LLAMA_TARGET_AVX512 inline __m512 load_f32(const float* p, __mmask16 m) {
  return _mm512_maskz_loadu_ps(m, p);
}
LLAMA_TARGET_AVX512 inline __m512 load_f32(const uint16_t* p, __mmask16 m, GemmWeights type) {
  const __m256i h = _mm256_maskz_loadu_epi16(m, p);
  if (type == GemmWeights::f16) return _mm512_maskz_cvtph_ps(kAll, h);
  return _mm512_castsi512_ps(
      _mm512_maskz_slli_epi32(kAll, _mm512_maskz_cvtepu16_epi32(kAll, h), 16));
}

// f32 [depth, kPanelRows] <- W[0..rows, k0..k0+depth) transposed, zero rows after.
template <GemmWeights Type, typename T>
LLAMA_TARGET_AVX512 void pack_panel(float* panel, const T* w, int64_t cols, int64_t rows,
                                    int64_t k0, int64_t depth) {
  for (int64_t v = 0; v < kVectors; ++v) {
    const int64_t n = std::clamp<int64_t>(rows - 16 * v, 0, 16);
    for (int64_t k = 0; k < depth; k += 16) {
      const int64_t kn = std::min<int64_t>(16, depth - k);
      const auto m = static_cast<__mmask16>((uint32_t{1} << kn) - 1u);
      __m512 b[16];
#pragma GCC unroll 16
      for (int64_t i = 0; i < 16; ++i) {
        const T* src = w + (16 * v + i) * cols + k0 + k;
        if constexpr (Type == GemmWeights::f32) {
          b[i] = i < n ? load_f32(src, m) : _mm512_setzero_ps();
        } else {
          b[i] = i < n ? load_f32(src, m, Type) : _mm512_setzero_ps();
        }
      }
      transpose16(b);
      for (int64_t j = 0; j < kn; ++j) _mm512_store_ps(panel + (k + j) * kPanelRows + 16 * v, b[j]);
    }
  }
}

template <int NR>
LLAMA_TARGET_AVX512 void micro_tile(const Tile& m) {
  __mmask16 mask[kVectors];
  for (int64_t v = 0; v < kVectors; ++v) {
    const int64_t n = std::clamp<int64_t>(m.rows - 16 * v, 0, 16);
    mask[v] = static_cast<__mmask16>((uint32_t{1} << n) - 1u);
  }
  __m512 acc[NR][kVectors];
#pragma GCC unroll 16
  for (int t = 0; t < NR; ++t) {
#pragma GCC unroll 4
    for (int v = 0; v < kVectors; ++v) {
      acc[t][v] =
          m.first ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(mask[v], m.y + t * m.ldy + 16 * v);
    }
  }
  const float* x = m.x;
  for (int64_t k = 0; k < m.depth; ++k) {
    __m512 w[kVectors];
#pragma GCC unroll 4
    for (int v = 0; v < kVectors; ++v) w[v] = _mm512_load_ps(m.panel + k * kPanelRows + 16 * v);
#pragma GCC unroll 16
    for (int t = 0; t < NR; ++t) {
      const __m512 b = _mm512_set1_ps(x[t * m.ldx + k]);
#pragma GCC unroll 4
      for (int v = 0; v < kVectors; ++v) acc[t][v] = _mm512_fmadd_ps(w[v], b, acc[t][v]);
    }
  }
#pragma GCC unroll 16
  for (int t = 0; t < NR; ++t) {
#pragma GCC unroll 4
    for (int v = 0; v < kVectors; ++v) {
      __m512 s = acc[t][v];
      if (m.residual) {
        s = _mm512_add_ps(_mm512_maskz_loadu_ps(mask[v], m.residual + t * m.ldr + 16 * v), s);
      }
      _mm512_mask_storeu_ps(m.y + t * m.ldy + 16 * v, mask[v], s);
    }
  }
}

}  // namespace avx512
#endif

namespace generic {

template <GemmWeights Type, typename T>
LLAMA_ALWAYS_INLINE float widen(T v) {
  if constexpr (Type == GemmWeights::f32) {
    return v;
  } else if constexpr (Type == GemmWeights::bf16) {
    return bf16_to_f32(v);
  } else {
    return f16_to_f32(v);
  }
}

// f32 [depth, kPanelRows] <- W[0..rows, k0..k0+depth) transposed, zero rows after.
template <GemmWeights Type, typename T>
LLAMA_ALWAYS_INLINE void pack_panel(float* panel, const T* w, int64_t cols, int64_t rows,
                                    int64_t k0, int64_t depth) {
  for (int64_t r = 0; r < kPanelRows; ++r) {
    for (int64_t k = 0; k < depth; ++k) {
      panel[k * kPanelRows + r] = r < rows ? widen<Type>(w[r * cols + k0 + k]) : 0.0f;
    }
  }
}

// Fma: whether the caller's level has FMA (fused_madd: std::fma there, the
// sum in double on the portable level).
template <int NR, bool Fma>
LLAMA_ALWAYS_INLINE void micro_tile(const Tile& m) {
  float acc[NR][kPanelRows];
  for (int t = 0; t < NR; ++t) {
    for (int64_t r = 0; r < kPanelRows; ++r) {
      acc[t][r] = m.first || r >= m.rows ? 0.0f : m.y[t * m.ldy + r];
    }
  }
  for (int64_t k = 0; k < m.depth; ++k) {
    const float* w = m.panel + k * kPanelRows;
    for (int t = 0; t < NR; ++t) {
      const float b = m.x[t * m.ldx + k];
      for (int64_t r = 0; r < kPanelRows; ++r) {
        acc[t][r] = fused_madd<Fma>(w[r], b, acc[t][r]);
      }
    }
  }
  for (int t = 0; t < NR; ++t) {
    for (int64_t r = 0; r < m.rows; ++r) {
      m.y[t * m.ldy + r] = m.residual ? m.residual[t * m.ldr + r] + acc[t][r] : acc[t][r];
    }
  }
}

}  // namespace generic

// The element type W is stored in.
template <GemmWeights Type>
using Stored = std::conditional_t<Type == GemmWeights::f32, float, uint16_t>;

// The generic kernels compiled for avx2 and portable; every pack takes W as
// bytes (its element type is Type's).
template <GemmWeights Type>
LLAMA_TARGET_AVX2 void pack_panel_avx2(float* panel, const void* w, int64_t cols, int64_t rows,
                                       int64_t k0, int64_t depth) {
  generic::pack_panel<Type>(panel, static_cast<const Stored<Type>*>(w), cols, rows, k0, depth);
}
template <GemmWeights Type>
void pack_panel_portable(float* panel, const void* w, int64_t cols, int64_t rows, int64_t k0,
                         int64_t depth) {
  generic::pack_panel<Type>(panel, static_cast<const Stored<Type>*>(w), cols, rows, k0, depth);
}
#if LLAMA_HAVE_X86_TARGETS
template <GemmWeights Type>
LLAMA_TARGET_AVX512 void pack_panel_avx512(float* panel, const void* w, int64_t cols, int64_t rows,
                                           int64_t k0, int64_t depth) {
  avx512::pack_panel<Type>(panel, static_cast<const Stored<Type>*>(w), cols, rows, k0, depth);
}
#endif
template <int NR>
LLAMA_TARGET_AVX2 void micro_tile_avx2(const Tile& m) {
  generic::micro_tile<NR, true>(m);
}
template <int NR>
void micro_tile_portable(const Tile& m) {
  generic::micro_tile<NR, false>(m);
}

using PackPanel = void (*)(float*, const void*, int64_t, int64_t, int64_t, int64_t);
using MicroTile = void (*)(const Tile&);
using Tiles = std::array<MicroTile, kTileTokens>;  // micro_tile<n> at n - 1
using Packs = std::array<PackPanel, 3>;            // by GemmWeights: f32, bf16, f16

// One level's kernels.
struct GemmKernels {
  Packs pack;
  Tiles tiles;
};

template <size_t... I>
constexpr GemmKernels make_kernels(Packs pack, std::index_sequence<I...>, int which) {
  switch (which) {
#if LLAMA_HAVE_X86_TARGETS
    case 2:
      return {pack, Tiles{&avx512::micro_tile<static_cast<int>(I + 1)>...}};
#endif
    case 1:
      return {pack, Tiles{&micro_tile_avx2<static_cast<int>(I + 1)>...}};
    default:
      return {pack, Tiles{&micro_tile_portable<static_cast<int>(I + 1)>...}};
  }
}
constexpr auto kSeq = std::make_index_sequence<kTileTokens>{};
#if LLAMA_HAVE_X86_TARGETS
constexpr GemmKernels kAvx512 =
    make_kernels({&pack_panel_avx512<GemmWeights::f32>, &pack_panel_avx512<GemmWeights::bf16>,
                  &pack_panel_avx512<GemmWeights::f16>},
                 kSeq, 2);
#endif
constexpr GemmKernels kAvx2 =
    make_kernels({&pack_panel_avx2<GemmWeights::f32>, &pack_panel_avx2<GemmWeights::bf16>,
                  &pack_panel_avx2<GemmWeights::f16>},
                 kSeq, 1);
constexpr GemmKernels kPortable =
    make_kernels({&pack_panel_portable<GemmWeights::f32>, &pack_panel_portable<GemmWeights::bf16>,
                  &pack_panel_portable<GemmWeights::f16>},
                 kSeq, 0);

const GemmKernels& kernels_for(SimdLevel level) {
  switch (runnable_level(level)) {
    case SimdLevel::avx512:
#if LLAMA_HAVE_X86_TARGETS
      return kAvx512;
#else
      [[fallthrough]];
#endif
    case SimdLevel::avx2:
      return kAvx2;
    case SimdLevel::portable:
      break;
  }
  return kPortable;
}

}  // namespace

void matmul_rows(float* y, int64_t ldy, const float* w, const float* x, int64_t ldx, int64_t cols,
                 int64_t tokens, int64_t r0, int64_t r1, const float* residual, int64_t ldr) {
  matmul_rows(simd_level(), y, ldy, w, x, ldx, cols, tokens, r0, r1, residual, ldr);
}

void matmul_rows(SimdLevel level, float* y, int64_t ldy, const float* w, const float* x,
                 int64_t ldx, int64_t cols, int64_t tokens, int64_t r0, int64_t r1,
                 const float* residual, int64_t ldr) {
  matmul_rows(level, y, ldy, GemmWeights::f32, w, x, ldx, cols, tokens, r0, r1, residual, ldr);
}

void matmul_rows(SimdLevel level, float* y, int64_t ldy, GemmWeights type, const void* w,
                 const float* x, int64_t ldx, int64_t cols, int64_t tokens, int64_t r0, int64_t r1,
                 const float* residual, int64_t ldr) {
  const GemmKernels& kernels = kernels_for(level);
  const PackPanel pack = kernels.pack[static_cast<size_t>(type)];
  const size_t value_bytes = type == GemmWeights::f32 ? sizeof(float) : sizeof(uint16_t);
  const auto* bytes = static_cast<const char*>(w);
  alignas(64) float panel[kDepth * kPanelRows];  // f32 [kDepth, kPanelRows]
  for (int64_t k0 = 0; k0 < cols; k0 += kDepth) {
    const int64_t depth = std::min(kDepth, cols - k0);
    const bool last = k0 + depth == cols;
    for (int64_t p = r0; p < r1; p += kPanelRows) {
      const int64_t rows = std::min(kPanelRows, r1 - p);
      if (type == GemmWeights::f32) {
        prefetch_next_panel(static_cast<const float*>(w), cols, r0, r1, p, k0);
      } else {
        prefetch_next_panel(static_cast<const uint16_t*>(w), cols, r0, r1, p, k0);
      }
      pack(panel, bytes + static_cast<size_t>(p * cols) * value_bytes, cols, rows, k0, depth);
      for (int64_t t = 0; t < tokens; t += kTileTokens) {
        const int64_t nt = std::min(kTileTokens, tokens - t);
        const Tile m{panel,
                     depth,
                     x + t * ldx + k0,
                     ldx,
                     y + t * ldy + p,
                     ldy,
                     last && residual ? residual + t * ldr + p : nullptr,
                     ldr,
                     rows,
                     k0 == 0};
        kernels.tiles[static_cast<size_t>(nt - 1)](m);
      }
    }
  }
}

}  // namespace llama::graph
