// GGUF's 2- and 3-bit K-quant super-blocks, Q3_K and Q2_K, as llama.cpp lays
// them out (ggml-common.h at commit c392e5094), and their exact
// dequantization (ggml-quants.c's dequantize_row_q3_K / dequantize_row_q2_K).
// Both hold 256 values as 16 sub-blocks of 16; value v belongs to sub-block
// v / 16. Blocks are read in place from the mapped file (2-byte aligned).
// Q4_K, Q5_K and Q6_K are in gguf_blocks.hpp.
#pragma once

#include <cstdint>
#include <span>

#include "llama/kernels/numbers/gguf_blocks.hpp"

namespace llama {

// value v = d * (scale[v / 16] - 32) * code_v, code_v in [-4, 3]: with
// v = 128 h + 32 j + i (half h, run j, i < 32), code_v = ((qs[32 h + i] >>
// 2 j) & 3) - 4 unless bit 4 h + j of hmask[i] is set. The 16 6-bit scales
// are packed in `scales` (q3_k_scale).
struct BlockQ3_K {
  uint8_t hmask[kQK_K / 8];
  uint8_t qs[kQK_K / 4];
  uint8_t scales[12];
  uint16_t d;  // f16 super-block scale
};
// value v = d * (scales[v / 16] & 15) * code_v - dmin * (scales[v / 16] >> 4),
// code_v = (qs[32 h + i] >> 2 j) & 3 with v = 128 h + 32 j + i as Q3_K.
struct BlockQ2_K {
  uint8_t scales[kQK_K / 16];  // low nibble: scale, high nibble: min
  uint8_t qs[kQK_K / 4];
  uint16_t d;     // f16 scale of the sub-block scales
  uint16_t dmin;  // f16 scale of the sub-block mins
};
static_assert(sizeof(BlockQ3_K) == 110 && sizeof(BlockQ2_K) == 84);

// Sub-block s's signed scale of a Q3_K block (the 6-bit field minus 32):
// sub-blocks 4g + k take the low bits from nibble g / 2 of byte 4 (g % 2) + k
// and the high two from bits 2g of byte 8 + k.
inline int q3_k_scale(const uint8_t* scales, int s) {
  const int g = s / 4, k = s % 4;
  const int low = (scales[4 * (g % 2) + k] >> (4 * (g / 2))) & 15;
  const int high = (scales[8 + k] >> (2 * g)) & 3;
  return (low | (high << 4)) - 32;
}

// Code v of a Q3_K block, in [-4, 3], and of a Q2_K block, in [0, 3].
inline int q3_k_code(const BlockQ3_K& b, int v) {
  const int h = v / 128, j = (v % 128) / 32, i = v % 32;
  const int low = (b.qs[32 * h + i] >> (2 * j)) & 3;
  return (b.hmask[i] >> (4 * h + j)) & 1 ? low : low - 4;
}
inline int q2_k_code(const BlockQ2_K& b, int v) {
  const int h = v / 128, j = (v % 128) / 32, i = v % 32;
  return (b.qs[32 * h + i] >> (2 * j)) & 3;
}

// `out.size()` values (a multiple of 256) from the blocks holding them, each
// exactly ggml's dequantize_row_q3_K / dequantize_row_q2_K.
void dequantize_q3_k(std::span<const BlockQ3_K> in, std::span<float> out);
void dequantize_q2_k(std::span<const BlockQ2_K> in, std::span<float> out);

}  // namespace llama
