// Private to the core: the AMX-INT8 int8 batch kernel (prefill), written once
// over a Tiles type that carries out its tile instructions: int8_tiles_amx.cpp
// gives it the real ones, and the tests a model of them (tests/amx_tile_model.hpp),
// so the schedule below is checked bit for bit on CPUs without AMX as well.
//
// Per 16 weight rows (the A tile: i8 [16 rows][K], read in place with the
// row stride) and 16 tokens (the B tile: the batch packed by pack_batch16,
// [K / 4][16 tokens][4]), one tdpbssd per K bytes of a group gives the 16 x 16
// int32 dots of that group exactly (K = the group size, or 64 at a time for
// larger groups: int32 sums of products of int8, as the VNNI kernels'). Each
// group's dots go to memory and are folded into 16 f32 registers (a row each,
// 16 tokens in the lanes) by the chain of the format's reference, group by
// group, so every (row, token) gets the portable loop's bits:
//   runq_c: val = fma(float(dot) * w_scale, x_scale, val)  (llama2.c int8, GGUF Q8_0)
//   q4_0:   val = fma(float(dot), w_scale * x_scale, val)   (GGUF Q4_0, llama.cpp's)
// The tile products of group g run while group g - 1 is folded (two sum tiles).
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "kernels/products/llama2c_int8_kernels.hpp"
#include "kernels/x86/amx_tiles.hpp"
#include "kernels/x86/int8_batch_pack.hpp"
#include "kernels/x86/int8_vnni_ops.hpp"
#include "llama/kernels/x86/avx512_transpose.hpp"
#include "llama/uninitialized_array.hpp"

namespace llama::detail::int8_tiles {

enum class Chain { runq_c, q4_0 };

// The tiles one call uses: 0 and 1 the sums (i32 16 x 16), 4 the weights (i8
// 16 rows x k bytes), 6 the batch (k / 4 rows of 16 tokens x 4 bytes).
inline amx::TileConfig config(int64_t k) {
  amx::TileConfig c;
  for (int t : {0, 1}) {
    c.rows[t] = 16;
    c.colsb[t] = 64;
  }
  c.rows[4] = 16;
  c.colsb[4] = static_cast<uint16_t>(k);
  c.rows[6] = static_cast<uint8_t>(k / 4);
  c.colsb[6] = 64;
  return c;
}

// One group's dots (i32 [16 rows][16 tokens]) into the rows' sums.
template <Chain kChain>
LLAMA_VNNI inline void fold(const int32_t* dots, const float* w_scales, int64_t scale_stride,
                            const vnni::Floats16& x_scales, __m512 val[16]) {
  const __m512 xs = _mm512_load_ps(x_scales.f);
#pragma GCC unroll 16
  for (int m = 0; m < 16; ++m) {
    const __m512 d = _mm512_maskz_cvtepi32_ps(vnni::kFull16, _mm512_load_si512(dots + 16 * m));
    const __m512 ws = _mm512_set1_ps(w_scales[m * scale_stride]);
    if constexpr (kChain == Chain::runq_c) {
      val[m] = _mm512_fmadd_ps(_mm512_mul_ps(d, ws), xs, val[m]);
    } else {
      val[m] = _mm512_fmadd_ps(d, _mm512_mul_ps(ws, xs), val[m]);
    }
  }
}

// val (f32 [16 rows][16 tokens]) into out[t * out_stride + r] for rows [r0,
// r0 + rows) and tokens [t0, t0 + tokens): transposed in registers, a store a token.
LLAMA_VNNI inline void store_sums(__m512 val[16], float* out, int64_t out_stride, int64_t r0,
                                  int64_t rows, int64_t t0, int64_t tokens) {
  avx512::transpose16(val);
  const auto mask = static_cast<__mmask16>(rows >= 16 ? 0xffff : (1u << rows) - 1);
  // Every index constant once unrolled, so val stays in registers (the tile
  // instructions' memory clobbers would otherwise keep it in memory).
#pragma GCC unroll 16
  for (int t = 0; t < 16; ++t) {
    if (t < tokens) _mm512_mask_storeu_ps(out + (t0 + t) * out_stride + r0, mask, val[t]);
  }
}

// out[t * out_stride + r] for rows [row_begin, row_end) of w and every vector t
// of x. The caller checks amx_int8_takes_group_size(x.group_size) and the CPU.
template <class Tiles, Chain kChain>
LLAMA_VNNI void matmat(Tiles& tiles, float* out, int64_t out_stride, const QuantizedTensor& w,
                       const Q8Batch& x, int64_t row_begin, int64_t row_end) {
  if (row_end <= row_begin || x.n <= 0) return;
  const int64_t cols = x.cols, gs = x.group_size, groups = cols / gs;
  const int64_t k = std::min<int64_t>(gs, 64);
  const vnni::Packed p = vnni::pack_batch16(x, vnni::PackedValues::as_is);
  // The last rows short of 16 are copied into 16 rows of zeros (zero scales),
  // so every A tile is 16 whole rows and none reads past the matrix.
  const int64_t whole_end = row_begin + (row_end - row_begin) / 16 * 16;
  const int64_t tail = row_end - whole_end;
  UninitializedArray<int8_t> tail_values(tail > 0 ? size_t(16 * cols) : 0);   // i8 [16, cols]
  UninitializedArray<float> tail_scales(tail > 0 ? size_t(16 * groups) : 0);  // f32 [16, groups]
  if (tail > 0) {
    std::memcpy(tail_values.data(), w.values.data() + whole_end * cols, size_t(tail * cols));
    std::memset(tail_values.data() + tail * cols, 0, size_t((16 - tail) * cols));
    std::copy_n(w.scales.data() + whole_end * groups, tail * groups, tail_scales.data());
    std::fill_n(tail_scales.data() + tail * groups, (16 - tail) * groups, 0.0f);
  }
  alignas(64) int32_t dots[2][256];  // i32 [2][16 rows][16 tokens]
  tiles.configure(config(k));
  for (int64_t r0 = row_begin; r0 < row_end; r0 += 16) {
    const bool whole = r0 < whole_end;
    const int8_t* wv = whole ? w.values.data() + r0 * cols : tail_values.data();
    const float* ws = whole ? w.scales.data() + r0 * groups : tail_scales.data();
    for (int64_t b = 0; b < p.blocks; ++b) {
      const vnni::Bytes64* xv = p.values.data() + b * p.quads;
      const vnni::Floats16* xs = p.scales.data() + b * p.groups;
      __m512 val[16];
#pragma GCC unroll 16
      for (auto& v : val) v = _mm512_setzero_ps();
      for (int64_t g = 0; g <= groups; ++g) {
        const int c = static_cast<int>(g & 1);
        if (g < groups) {
          tiles.zero(c);
          for (int64_t at = g * gs; at < (g + 1) * gs; at += k) {
            tiles.load_weights(wv + at, cols);
            tiles.load_batch(xv + at / 4);
            tiles.multiply(c);
          }
        }
        if (g > 0) fold<kChain>(dots[1 - c], ws + (g - 1), groups, xs[g - 1], val);
        if (g < groups) tiles.store(c, dots[c]);
      }
      store_sums(val, out, out_stride, r0, whole ? 16 : tail, 16 * b, x.n - 16 * b);
    }
  }
  tiles.release();
}

}  // namespace llama::detail::int8_tiles
