// The one definition of each GGUF block type's values (dequantization) and the
// reference quantizers, in ggml's operation order. No value depends on FMA
// contraction: Q4_K's d1 * q is exact (an f16 times a 6-bit scale times a
// 4-bit q needs at most 21 significant bits; Q5_K's 5-bit q at most 22), so
// d1 * q - m1 rounds once fused or not, and the other types have no sum to fuse.
#include "llama/kernels/numbers/gguf_blocks.hpp"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "llama/kernels/numbers/half.hpp"

namespace llama {

void dequantize_q8_0(std::span<const BlockQ8_0> in, std::span<float> out) {
  for (size_t i = 0; i < out.size() / kQK; ++i) {
    const float d = f16_to_f32(in[i].d);
    for (int j = 0; j < kQK; ++j) out[i * kQK + j] = static_cast<float>(in[i].qs[j]) * d;
  }
}

void dequantize_q4_0(std::span<const BlockQ4_0> in, std::span<float> out) {
  for (size_t i = 0; i < out.size() / kQK; ++i) {
    const float d = f16_to_f32(in[i].d);
    for (int j = 0; j < kQK / 2; ++j) {
      out[i * kQK + j] = static_cast<float>((in[i].qs[j] & 0x0F) - 8) * d;
      out[i * kQK + j + kQK / 2] = static_cast<float>((in[i].qs[j] >> 4) - 8) * d;
    }
  }
}

namespace {

// Q4_K, and Q5_K (Block = BlockQ5_K, whose codes take bit s of qh[l] as 16 in
// sub-block s): ggml's dequantize_row_q4_K / _q5_K, d1 * q - m1 per value.
template <typename Block>
void dequantize_q4_5_k(std::span<const Block> in, std::span<float> out) {
  float* y = out.data();
  for (size_t i = 0; i < out.size() / kQK_K; ++i) {
    const Block& b = in[i];
    const float d = f16_to_f32(b.d);
    const float min = f16_to_f32(b.dmin);
    const uint8_t* q = b.qs;
    for (int s = 0; s < 8; s += 2) {
      uint8_t sc, m;
      q4_k_scale_min(b.scales, s, sc, m);
      const float d1 = d * sc, m1 = min * m;
      q4_k_scale_min(b.scales, s + 1, sc, m);
      const float d2 = d * sc, m2 = min * m;
      int high[2][32] = {};  // Q5_K's fifth bit, as 16
      if constexpr (std::is_same_v<Block, BlockQ5_K>) {
        for (int l = 0; l < 32; ++l) {
          high[0][l] = 16 * ((b.qh[l] >> s) & 1);
          high[1][l] = 16 * ((b.qh[l] >> (s + 1)) & 1);
        }
      }
      for (int l = 0; l < 32; ++l) *y++ = d1 * static_cast<float>((q[l] & 0xF) + high[0][l]) - m1;
      for (int l = 0; l < 32; ++l) *y++ = d2 * static_cast<float>((q[l] >> 4) + high[1][l]) - m2;
      q += 32;
    }
  }
}

}  // namespace

void dequantize_q4_k(std::span<const BlockQ4_K> in, std::span<float> out) {
  dequantize_q4_5_k(in, out);
}

void dequantize_q5_k(std::span<const BlockQ5_K> in, std::span<float> out) {
  dequantize_q4_5_k(in, out);
}

void dequantize_q6_k(std::span<const BlockQ6_K> in, std::span<float> out) {
  float* y = out.data();
  for (size_t i = 0; i < out.size() / kQK_K; ++i) {
    const BlockQ6_K& b = in[i];
    const float d = f16_to_f32(b.d);
    const uint8_t* ql = b.ql;
    const uint8_t* qh = b.qh;
    const int8_t* sc = b.scales;
    for (int half = 0; half < 2; ++half) {
      for (int l = 0; l < 32; ++l) {
        const int is = l / 16;
        const int q1 = ((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
        const int q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
        const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
        const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
        // (d * scale) * q, in ggml's order
        y[l + 0] = d * static_cast<float>(sc[is + 0]) * static_cast<float>(q1);
        y[l + 32] = d * static_cast<float>(sc[is + 2]) * static_cast<float>(q2);
        y[l + 64] = d * static_cast<float>(sc[is + 4]) * static_cast<float>(q3);
        y[l + 96] = d * static_cast<float>(sc[is + 6]) * static_cast<float>(q4);
      }
      y += 128;
      ql += 64;
      qh += 32;
      sc += 8;
    }
  }
}

void quantize_q8_0(std::span<const float> in, std::span<BlockQ8_0> out) {
  for (size_t i = 0; i < in.size() / kQK; ++i) {
    const float* x = in.data() + i * kQK;
    float amax = 0.0f;
    for (int j = 0; j < kQK; ++j) amax = std::max(amax, std::fabs(x[j]));  // ggml's MAX
    const float d = amax / 127;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    out[i].d = f32_to_f16(d);
    for (int j = 0; j < kQK; ++j) out[i].qs[j] = static_cast<int8_t>(std::round(x[j] * id));
  }
}

void quantize_q4_0(std::span<const float> in, std::span<BlockQ4_0> out) {
  for (size_t i = 0; i < in.size() / kQK; ++i) {
    const float* x = in.data() + i * kQK;
    float amax = 0.0f, max = 0.0f;  // the value of largest magnitude, first one on ties
    for (int j = 0; j < kQK; ++j) {
      if (amax < std::fabs(x[j])) {
        amax = std::fabs(x[j]);
        max = x[j];
      }
    }
    const float d = max / -8;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    out[i].d = f32_to_f16(d);
    for (int j = 0; j < kQK / 2; ++j) {
      const float x0 = x[j] * id;
      const float x1 = x[kQK / 2 + j] * id;
      // ggml: MIN(15, (int8_t)(x + 8.5f)), truncating toward zero
      const auto q0 =
          static_cast<uint8_t>(std::min(15, static_cast<int>(static_cast<int8_t>(x0 + 8.5f))));
      const auto q1 =
          static_cast<uint8_t>(std::min(15, static_cast<int>(static_cast<int8_t>(x1 + 8.5f))));
      out[i].qs[j] = static_cast<uint8_t>(q0 | (q1 << 4));
    }
  }
}

}  // namespace llama
