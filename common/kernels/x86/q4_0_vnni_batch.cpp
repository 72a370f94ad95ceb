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
#include "kernels/x86/tile_table.hpp"
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

// Blocks ahead of the one being repacked that each row is prefetched: the
// repack is where a prompt's weights first come from memory, 16 rows side by
// side, more streams than the hardware prefetchers follow well.
constexpr int64_t kPrefetchBlocks = 16;

// Rows [r0, r0 + here) (here <= 16; missing lanes repeat row r0, their
// results are never stored) into one panel: codes u8 [quads, 16, 4] and
// scales f32 [blocks, 16]. Per block, the 16 rows' 16 bytes of nibbles go
// four rows to a register (register k: rows k, 4 + k, 8 + k, 12 + k in its
// 128-bit lanes), and a 4 x 4 transpose of 32-bit elements in every 128-bit
// lane leaves dword q of all 16 rows, in row order, in register q: its low
// nibbles are quad q of the block's codes (values 4q..4q+3), its high ones
// quad 4 + q (values 16 + 4q..).
LLAMA_Q4_VNNI void repack_panel(const BlockMatrix& w, int64_t r0, int64_t here, Bytes64* codes,
                                Floats16* scales) {
  const int64_t blocks = w.cols / 32;
  const std::byte* rows[16];
  for (int i = 0; i < 16; ++i) rows[i] = w.row(r0 + (i < here ? i : 0));
  const __m512i low4 = _mm512_set1_epi8(0x0f);
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t at = b * kBlockBytes;
    if (b % 4 == 0) {
      for (int i = 0; i < 16; ++i) {
        _mm_prefetch(reinterpret_cast<const char*>(rows[i] + at + kPrefetchBlocks * kBlockBytes),
                     _MM_HINT_T0);
      }
    }
    __m512i z[4];
    for (int k = 0; k < 4; ++k) {
      const auto lane = [&](int i) {
        return _mm_loadu_si128(reinterpret_cast<const __m128i*>(rows[i] + at + 2));
      };
      z[k] = _mm512_maskz_inserti32x4(
          kFull16,
          _mm512_maskz_inserti32x4(
              kFull16,
              _mm512_maskz_inserti32x4(kFull16, _mm512_castsi128_si512(lane(k)), lane(4 + k), 1),
              lane(8 + k), 2),
          lane(12 + k), 3);
    }
    const __m512i t0 = _mm512_maskz_unpacklo_epi32(kFull16, z[0], z[1]);
    const __m512i t1 = _mm512_maskz_unpackhi_epi32(kFull16, z[0], z[1]);
    const __m512i t2 = _mm512_maskz_unpacklo_epi32(kFull16, z[2], z[3]);
    const __m512i t3 = _mm512_maskz_unpackhi_epi32(kFull16, z[2], z[3]);
    const __m512i y[4] = {
        _mm512_maskz_unpacklo_epi64(kFull8, t0, t2), _mm512_maskz_unpackhi_epi64(kFull8, t0, t2),
        _mm512_maskz_unpacklo_epi64(kFull8, t1, t3), _mm512_maskz_unpackhi_epi64(kFull8, t1, t3)};
    Bytes64* c = codes + b * 8;
    for (int q = 0; q < 4; ++q) {
      _mm512_store_si512(c + q, _mm512_and_si512(y[q], low4));
      _mm512_store_si512(c + 4 + q, _mm512_and_si512(_mm512_srli_epi16(y[q], 4), low4));
    }
    alignas(32) uint16_t h[16];
    for (int i = 0; i < 16; ++i) std::memcpy(&h[i], rows[i] + at, 2);
    _mm512_store_ps(
        scales[b].f,
        _mm512_maskz_cvtph_ps(kFull16, _mm256_load_si256(reinterpret_cast<const __m256i*>(h))));
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

// kTiles[P - 1][T - 1] is tile<P, T>: the edges of a tile take smaller ones.
constexpr auto kTiles =
    tile_table<TileFn, kPanels, kTokens>([]<int P, int T>() -> TileFn { return &tile<P, T>; });

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
    // The next tile's rows (contiguous) are prefetched into L2 while this one
    // computes, a slice per token group, so that its repack finds them there
    // rather than waiting on memory with the vector units idle.
    const int64_t next_rows = std::min(kTileRows, row_end - r0 - rows);
    const char* next = next_rows > 0 ? reinterpret_cast<const char*>(w.row(r0 + rows)) : nullptr;
    const int64_t next_bytes = next_rows * w.row_bytes(), groups = (n + kTokens - 1) / kTokens;
    for (int64_t t0 = 0; t0 < n; t0 += kTokens) {
      const auto tokens = static_cast<size_t>(std::min<int64_t>(kTokens, n - t0));
      if (next != nullptr) {
        const int64_t g = t0 / kTokens;
        for (int64_t line = next_bytes * g / groups / 64 * 64; line < next_bytes * (g + 1) / groups;
             line += 64) {
          _mm_prefetch(next + line, _MM_HINT_T1);
        }
      }
      for (int64_t p0 = 0; p0 < tile_panels; p0 += kPanels) {
        const auto ps = static_cast<size_t>(std::min<int64_t>(kPanels, tile_panels - p0));
        kTiles[ps - 1][tokens - 1](job, p0, t0);
      }
    }
  }
}

}  // namespace llama::detail
