// GGUF's block-quantized types as llama.cpp lays them out (ggml-common.h at
// commit c392e5094), their exact dequantization, and the quantizers the
// converter writes with. One definition of each value: the reference backend
// dequantizes with these (the oracle), and every faster kernel must give the
// same weights. Blocks are read in place from the mapped file (2-byte aligned).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace llama {

inline constexpr int64_t kQK = 32;     // values per Q8_0 / Q4_0 block
inline constexpr int64_t kQK_K = 256;  // values per K-quant super-block

// value j = qs[j] * d
struct BlockQ8_0 {
  uint16_t d;  // f16 scale
  int8_t qs[kQK];
};
// value j = ((qs[j % 16] >> (4 * (j / 16))) & 15) - 8) * d: byte j holds
// values j (low nibble) and j + 16 (high nibble)
struct BlockQ4_0 {
  uint16_t d;  // f16 scale
  uint8_t qs[kQK / 2];
};
// 8 sub-blocks of 32: value = d * sc[s] * q - dmin * m[s], q a nibble, (sc, m)
// 6-bit pairs packed in `scales` (get_scale_min_k4); each 32-byte run of qs
// holds sub-block 2k in its low nibbles and 2k + 1 in its high ones.
struct BlockQ4_K {
  uint16_t d;     // f16 scale of the sub-block scales
  uint16_t dmin;  // f16 scale of the sub-block mins
  uint8_t scales[12];
  uint8_t qs[kQK_K / 2];
};
// 16 sub-blocks of 16: value = d * scales[s] * (q - 32), q 6 bits: 4 from ql,
// 2 from qh, laid out in two halves of 128 values (see dequantize_q6_k).
struct BlockQ6_K {
  uint8_t ql[kQK_K / 2];
  uint8_t qh[kQK_K / 4];
  int8_t scales[kQK_K / 16];
  uint16_t d;  // f16 super-block scale
};
static_assert(sizeof(BlockQ8_0) == 34 && sizeof(BlockQ4_0) == 18);
// 8 sub-blocks of 32: value = d * sc[s] * q - dmin * m[s] as Q4_K, q 5 bits:
// Q4_K's nibbles plus bit s of qh[i] as 16 (value i of sub-block s).
struct BlockQ5_K {
  uint16_t d;     // f16 scale of the sub-block scales
  uint16_t dmin;  // f16 scale of the sub-block mins
  uint8_t scales[12];
  uint8_t qh[kQK_K / 8];
  uint8_t qs[kQK_K / 2];
};
static_assert(sizeof(BlockQ4_K) == 144 && sizeof(BlockQ6_K) == 210 && sizeof(BlockQ5_K) == 176);

// Sub-block s's 6-bit scale and min of a Q4_K block (ggml's get_scale_min_k4).
inline void q4_k_scale_min(const uint8_t* scales, int s, uint8_t& sc, uint8_t& m) {
  if (s < 4) {
    sc = scales[s] & 63;
    m = scales[s + 4] & 63;
  } else {
    sc = static_cast<uint8_t>((scales[s + 4] & 0xF) | ((scales[s - 4] >> 6) << 4));
    m = static_cast<uint8_t>((scales[s + 4] >> 4) | ((scales[s] >> 6) << 4));
  }
}

// Dequantization: `out.size()` values from the blocks holding them (a
// multiple of the block size), each value exactly ggml's dequantize_row_*.
void dequantize_q8_0(std::span<const BlockQ8_0> in, std::span<float> out);
void dequantize_q4_0(std::span<const BlockQ4_0> in, std::span<float> out);
void dequantize_q4_k(std::span<const BlockQ4_K> in, std::span<float> out);
void dequantize_q6_k(std::span<const BlockQ6_K> in, std::span<float> out);
void dequantize_q5_k(std::span<const BlockQ5_K> in, std::span<float> out);

// ggml's reference quantizers (quantize_row_q8_0_ref, quantize_row_q4_0_ref,
// what llama-quantize uses without an importance matrix): byte for byte the
// blocks llama.cpp writes. `in.size()` is a multiple of 32; `out` holds
// in.size() / 32 blocks. Values must be finite (the converter checks).
void quantize_q8_0(std::span<const float> in, std::span<BlockQ8_0> out);
void quantize_q4_0(std::span<const float> in, std::span<BlockQ4_0> out);

}  // namespace llama
