// GGUF's other 32-value block types, Q4_1, Q5_0 and Q5_1, as llama.cpp lays
// them out (ggml-common.h at commit c392e5094), their exact dequantization,
// and the q8_1 activation blocks llama.cpp pairs Q4_1 and Q5_1 with. Blocks
// are read in place from the mapped file (2-byte aligned). Q8_0 and Q4_0 are
// in gguf_blocks.hpp.
#pragma once

#include <cstdint>
#include <span>

#include "llama/kernels/numbers/gguf_blocks.hpp"

namespace llama {

// value j = code_j * d + m, code_j = (qs[j % 16] >> (4 * (j / 16))) & 15
struct BlockQ4_1 {
  uint16_t d;  // f16 scale
  uint16_t m;  // f16 min
  uint8_t qs[kQK / 2];
};
// value j = (code_j - 16) * d, code_j = Q4_0's nibble | bit j of qh << 4
// (qh read as a little-endian uint32)
struct BlockQ5_0 {
  uint16_t d;  // f16 scale
  uint8_t qh[4];
  uint8_t qs[kQK / 2];
};
// value j = code_j * d + m, code_j as Q5_0's
struct BlockQ5_1 {
  uint16_t d;  // f16 scale
  uint16_t m;  // f16 min
  uint8_t qh[4];
  uint8_t qs[kQK / 2];
};
static_assert(sizeof(BlockQ4_1) == 20 && sizeof(BlockQ5_0) == 22 && sizeof(BlockQ5_1) == 24);

// The 32 codes of a block (u8 [32], in value order): Q4_1's 0..15, Q5_0's
// and Q5_1's 0..31.
void block_codes(const BlockQ4_1& b, uint8_t* codes);
void block_codes(const BlockQ5_0& b, uint8_t* codes);
void block_codes(const BlockQ5_1& b, uint8_t* codes);

// Dequantization: `out.size()` values from the blocks holding them, each
// value exactly ggml's dequantize_row_*: code * d is exact (5 bits times an
// f16's 11), so code * d + m rounds once, fused or not.
void dequantize_q4_1(std::span<const BlockQ4_1> in, std::span<float> out);
void dequantize_q5_0(std::span<const BlockQ5_0> in, std::span<float> out);
void dequantize_q5_1(std::span<const BlockQ5_1> in, std::span<float> out);

}  // namespace llama
