// Q3_K and Q2_K dequantization (low_kquant_blocks.hpp): each value one f32
// product (and, for Q2_K, one subtraction) of the same operands in the same
// order as ggml's dequantize_row_q3_K / dequantize_row_q2_K.
#include "llama/kernels/numbers/low_kquant_blocks.hpp"

#include "llama/kernels/numbers/half.hpp"

namespace llama {

void dequantize_q3_k(std::span<const BlockQ3_K> in, std::span<float> out) {
  float* y = out.data();
  for (size_t b = 0; b < out.size() / kQK_K; ++b) {
    const BlockQ3_K& blk = in[b];
    const float d = f16_to_f32(blk.d);
    for (int v = 0; v < kQK_K; ++v) {
      const float dl = d * static_cast<float>(q3_k_scale(blk.scales, v / 16));
      *y++ = dl * static_cast<float>(q3_k_code(blk, v));
    }
  }
}

void dequantize_q2_k(std::span<const BlockQ2_K> in, std::span<float> out) {
  float* y = out.data();
  for (size_t b = 0; b < out.size() / kQK_K; ++b) {
    const BlockQ2_K& blk = in[b];
    const float d = f16_to_f32(blk.d);
    const float dmin = f16_to_f32(blk.dmin);
    for (int v = 0; v < kQK_K; ++v) {
      const uint8_t sc = blk.scales[v / 16];
      const float dl = d * static_cast<float>(sc & 15);
      const float ml = dmin * static_cast<float>(sc >> 4);
      *y++ = dl * static_cast<float>(q2_k_code(blk, v)) - ml;
    }
  }
}

}  // namespace llama
