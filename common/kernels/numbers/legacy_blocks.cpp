// The values of GGUF's Q4_1, Q5_0 and Q5_1 blocks, in ggml's operation order
// (dequantize_row_q4_1, _q5_0, _q5_1 in ggml-quants.c).
#include "llama/kernels/numbers/legacy_blocks.hpp"

#include <cstring>

#include "llama/kernels/numbers/half.hpp"

namespace llama {
namespace {

// The 32 fifth bits of a Q5 block, bit j for value j.
uint32_t high_bits(const uint8_t (&qh)[4]) {
  uint32_t h;
  std::memcpy(&h, qh, sizeof h);
  return h;
}

void nibbles(const uint8_t* qs, uint8_t* codes) {
  for (int j = 0; j < kQK / 2; ++j) {
    codes[j] = qs[j] & 0x0F;
    codes[j + kQK / 2] = qs[j] >> 4;
  }
}

void add_high_bits(uint32_t h, uint8_t* codes) {
  for (int j = 0; j < kQK; ++j) codes[j] |= static_cast<uint8_t>(((h >> j) & 1) << 4);
}

}  // namespace

void block_codes(const BlockQ4_1& b, uint8_t* codes) { nibbles(b.qs, codes); }

void block_codes(const BlockQ5_0& b, uint8_t* codes) {
  nibbles(b.qs, codes);
  add_high_bits(high_bits(b.qh), codes);
}

void block_codes(const BlockQ5_1& b, uint8_t* codes) {
  nibbles(b.qs, codes);
  add_high_bits(high_bits(b.qh), codes);
}

void dequantize_q4_1(std::span<const BlockQ4_1> in, std::span<float> out) {
  uint8_t codes[kQK];
  for (size_t i = 0; i < out.size() / kQK; ++i) {
    block_codes(in[i], codes);
    const float d = f16_to_f32(in[i].d), m = f16_to_f32(in[i].m);
    for (int j = 0; j < kQK; ++j) out[i * kQK + j] = static_cast<float>(codes[j]) * d + m;
  }
}

void dequantize_q5_0(std::span<const BlockQ5_0> in, std::span<float> out) {
  uint8_t codes[kQK];
  for (size_t i = 0; i < out.size() / kQK; ++i) {
    block_codes(in[i], codes);
    const float d = f16_to_f32(in[i].d);
    for (int j = 0; j < kQK; ++j) out[i * kQK + j] = static_cast<float>(codes[j] - 16) * d;
  }
}

void dequantize_q5_1(std::span<const BlockQ5_1> in, std::span<float> out) {
  uint8_t codes[kQK];
  for (size_t i = 0; i < out.size() / kQK; ++i) {
    block_codes(in[i], codes);
    const float d = f16_to_f32(in[i].d), m = f16_to_f32(in[i].m);
    for (int j = 0; j < kQK; ++j) out[i * kQK + j] = static_cast<float>(codes[j]) * d + m;
  }
}

}  // namespace llama
