// The AVX-512 VNNI batch kernel for GGUF Q4_0 weights against q8_0-block
// activations (prefill): 16 weight rows in the 16 lanes of a register.
//
// A tile of rows is repacked once per call into a per-thread buffer: per 16
// rows, each row's codes (0..15, the stored nibbles, in x's value order) as
// u8 quads [cols / 4, 16 rows, 4] and the f16 scales widened to
// [blocks, 16 rows]. Then per block, vpdpbusd multiplies a quad of 16 rows'
// codes (unsigned) with one token's 4 values broadcast (signed); the
// accumulator starts at -8 * sum of the token's block, so it ends at the
// exact int32 dot of (code - 8) with x. Each lane then takes val =
// fma(float(dot), w_scale * x_scale, val), block after block: the portable
// kernel's sequence for each (row, token), so every result has
// q8_0_blocks_matvec_rows' bits, whatever the tile shapes and the batch.
#include <algorithm>
#include <array>
#include <cstring>
#include <utility>
#include <vector>

#include "kernels/products/gguf_kernels.hpp"
#include "kernels/x86/int8_vnni_ops.hpp"
#include "llama/kernels/x86/avx512_transpose.hpp"

namespace llama::detail {
namespace {

using namespace vnni;
using avx512::transpose16;

// vnni's operations plus 256-bit vpdpbusd (AVX-512 VL).
#define LLAMA_Q4_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))

constexpr int64_t kBlockBytes = 18;  // f16 scale, 16 bytes of nibbles
// Rows repacked per tile: 64 rows' codes (64 * cols bytes) stay in L2 while
// every token passes over them.
constexpr int64_t kTileRows = 64;
// A register tile is kPanels panels of 16 rows x kTokens tokens: as many int32
// and f32 accumulators, plus the panels' quads, in the 32 zmm registers.
constexpr int kPanels = 2;
constexpr int kTokens = 6;

struct alignas(64) Bytes64 {
  uint8_t b[64];
};
struct alignas(64) Floats16 {
  float f[16];
};

// A Q4_0 row's blocks b and (when `pair`) b + 1 as u8 codes in x's order:
// [b's low nibbles (values 0..15), b's high ones (16..31), the same of b + 1];
// without `pair` the upper half repeats b (never stored).
LLAMA_Q4_VNNI inline __m512i codes_pair(const std::byte* blk, bool pair) {
  __m512i v = _mm512_maskz_broadcast_i32x4(
      kFull16, _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + 2)));
  if (pair) {
    v = _mm512_mask_broadcast_i32x4(
        v, 0xff00, _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + kBlockBytes + 2)));
  }
  // 128-bit lanes 1 and 3 (16-bit elements 8..15, 24..31): the high nibbles.
  v = _mm512_mask_srli_epi16(v, 0xff00ff00, v, 4);
  return _mm512_and_si512(v, _mm512_set1_epi8(0x0f));
}

// Rows [r0, r0 + here) (here <= 16; missing lanes repeat row r0, their
// results are never stored) into one panel: codes u8 [quads, 16, 4] and
// scales f32 [blocks, 16].
LLAMA_Q4_VNNI void repack_panel(const BlockMatrix& w, int64_t r0, int64_t here, Bytes64* codes,
                                Floats16* scales) {
  const int64_t blocks = w.cols / 32;
  const std::byte* rows[16];
  alignas(64) int32_t at[16];
  for (int i = 0; i < 16; ++i) {
    rows[i] = w.row(r0 + (i < here ? i : 0));
    at[i] = static_cast<int32_t>(rows[i] - rows[0]);
  }
  const __m512i offsets = _mm512_load_si512(at);
  for (int64_t g = 0; g < blocks; g += 2) {
    const bool pair = g + 1 < blocks;
    __m512i v[16];
#pragma GCC unroll 16
    for (int i = 0; i < 16; ++i) v[i] = codes_pair(rows[i] + g * kBlockBytes, pair);
    transpose16(v);  // v[k] lane i: quad k of the pair in row i
    for (int k = 0; k < (pair ? 16 : 8); ++k) _mm512_store_si512(codes + g * 8 + k, v[k]);
    for (int h = 0; h < (pair ? 2 : 1); ++h) {
      // 4 bytes at each row's block start: the scale and two code bytes.
      const __m512i raw = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), kFull16, offsets,
                                                      rows[0] + (g + h) * kBlockBytes, 1);
      _mm512_store_ps(scales[g + h].f,
                      _mm512_maskz_cvtph_ps(kFull16, _mm512_maskz_cvtepi32_epi16(kFull16, raw)));
    }
  }
}

// What every register tile of one call reads.
struct Job {
  const Bytes64* codes;    // u8 [panels, quads, 16, 4]
  const Floats16* scales;  // f32 [panels, blocks, 16]
  const int8_t* x;         // i8 [tokens, cols]
  const float* x_scales;   // f32 [tokens, blocks]
  const int32_t* minus8;   // i32 [tokens, blocks]: -8 * sum of each block of x
  float* out;              // out[t * out_stride + r - tile row 0]
  int64_t out_stride, blocks, cols;
  int64_t rows;  // rows of the tile (the last panel may be partial)
};

// Panels [p0, p0 + P) x tokens [t0, t0 + T).
template <int P, int T>
LLAMA_Q4_VNNI void tile(const Job& j, int64_t p0, int64_t t0) {
  const int64_t quads = j.cols / 4;
  const Bytes64* codes = j.codes + p0 * quads;
  const Floats16* scales = j.scales + p0 * j.blocks;
  const int8_t* x[T];
  const float* xs[T];
  const int32_t* m8[T];
  for (int t = 0; t < T; ++t) {
    x[t] = j.x + (t0 + t) * j.cols;
    xs[t] = j.x_scales + (t0 + t) * j.blocks;
    m8[t] = j.minus8 + (t0 + t) * j.blocks;
  }
  __m512 val[P][T];
  for (int p = 0; p < P; ++p) {
    for (int t = 0; t < T; ++t) val[p][t] = _mm512_setzero_ps();
  }
  for (int64_t b = 0; b < j.blocks; ++b) {
    __m512i acc[P][T];
    for (int t = 0; t < T; ++t) {
      const __m512i c = _mm512_set1_epi32(m8[t][b]);
      for (int p = 0; p < P; ++p) acc[p][t] = c;
    }
#pragma GCC unroll 8
    for (int q = 0; q < 8; ++q) {
      __m512i wq[P];
      for (int p = 0; p < P; ++p) wq[p] = _mm512_load_si512(codes + p * quads + b * 8 + q);
      for (int t = 0; t < T; ++t) {
        int32_t quad;
        std::memcpy(&quad, x[t] + b * 32 + 4 * q, 4);
        const __m512i xq = _mm512_set1_epi32(quad);
        for (int p = 0; p < P; ++p) acc[p][t] = _mm512_dpbusd_epi32(acc[p][t], wq[p], xq);
      }
    }
    for (int p = 0; p < P; ++p) {
      const __m512 d = _mm512_load_ps(scales[p * j.blocks + b].f);
      for (int t = 0; t < T; ++t) {
        const __m512 s = _mm512_mul_ps(d, _mm512_set1_ps(xs[t][b]));
        val[p][t] = _mm512_fmadd_ps(_mm512_maskz_cvtepi32_ps(kFull16, acc[p][t]), s, val[p][t]);
      }
    }
  }
  for (int p = 0; p < P; ++p) {
    const int64_t r = (p0 + p) * 16;
    const int64_t here = std::min<int64_t>(16, j.rows - r);
    const auto mask = static_cast<__mmask16>((1u << here) - 1);
    for (int t = 0; t < T; ++t) {
      _mm512_mask_storeu_ps(j.out + (t0 + t) * j.out_stride + r, mask, val[p][t]);
    }
  }
}

using TileFn = void (*)(const Job&, int64_t, int64_t);

template <int P, size_t... T>
constexpr std::array<TileFn, sizeof...(T)> tiles_of_panels(std::index_sequence<T...>) {
  return {&tile<P, int(T) + 1>...};
}
template <size_t... P>
constexpr std::array<std::array<TileFn, kTokens>, sizeof...(P)> all_tiles(
    std::index_sequence<P...>) {
  return {tiles_of_panels<int(P) + 1>(std::make_index_sequence<kTokens>{})...};
}
// kTiles[P - 1][T - 1] is tile<P, T>: the edges of a tile take smaller ones.
constexpr auto kTiles = all_tiles(std::make_index_sequence<kPanels>{});

}  // namespace

LLAMA_Q4_VNNI void q4_0_matmat_rows_vnni(std::span<float> out, int64_t out_stride,
                                         const BlockMatrix& w, const Q8BatchView& x,
                                         int64_t row_begin, int64_t row_end) {
  const int64_t cols = w.cols, blocks = cols / 32;
  const int64_t n = static_cast<int64_t>(x.values.size()) / cols;
  if (row_end <= row_begin || n == 0) return;
  // Kept per thread from call to call, as q8_0_blocks_matmat_rows' tiles are
  // (a prefill makes thousands of calls; fresh pages would cost their zeroing
  // each time). Every element read is written by this call first.
  thread_local std::vector<Bytes64> codes;    // u8 [tile panels, cols / 4, 16, 4]
  thread_local std::vector<Floats16> scales;  // f32 [tile panels, blocks, 16]
  thread_local std::vector<int32_t> minus8;   // i32 [n, blocks]
  const int64_t panels = kTileRows / 16;
  codes.resize(std::max(codes.size(), static_cast<size_t>(panels * cols / 4)));
  scales.resize(std::max(scales.size(), static_cast<size_t>(panels * blocks)));
  minus8.resize(std::max(minus8.size(), static_cast<size_t>(n * blocks)));
  const __m256i ones = _mm256_set1_epi8(1);
  for (int64_t i = 0; i < n * blocks; ++i) {
    const __m256i xq =
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.values.data() + i * 32));
    minus8[static_cast<size_t>(i)] =
        -8 * reduce_add256(_mm256_dpbusd_epi32(_mm256_setzero_si256(), ones, xq));
  }
  Job job{codes.data(),
          scales.data(),
          x.values.data(),
          x.scales.data(),
          minus8.data(),
          nullptr,
          out_stride,
          blocks,
          cols,
          0};
  for (int64_t r0 = row_begin; r0 < row_end; r0 += kTileRows) {
    const int64_t rows = std::min(kTileRows, row_end - r0);
    const int64_t tile_panels = (rows + 15) / 16;
    for (int64_t p = 0; p < tile_panels; ++p) {
      repack_panel(w, r0 + 16 * p, std::min<int64_t>(16, rows - 16 * p),
                   codes.data() + p * (cols / 4), scales.data() + p * blocks);
    }
    job.out = out.data() + r0;
    job.rows = rows;
    for (int64_t t0 = 0; t0 < n; t0 += kTokens) {
      const auto tokens = static_cast<size_t>(std::min<int64_t>(kTokens, n - t0));
      for (int64_t p0 = 0; p0 < tile_panels; p0 += kPanels) {
        const auto ps = static_cast<size_t>(std::min<int64_t>(kPanels, tile_panels - p0));
        kTiles[ps - 1][tokens - 1](job, p0, t0);
      }
    }
  }
}

}  // namespace llama::detail
