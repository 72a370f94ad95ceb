// Q4_K, Q5_K and Q6_K x q8_K row dots (gguf_kquant.hpp's definition) as plain
// loops: the definitions the x86 kernels reproduce.
#include <cmath>
#include <cstring>
#include <type_traits>

#include "kernels/products/gguf_kquant_kernels.hpp"
#include "llama/kernels/numbers/gguf_blocks.hpp"
#include "llama/kernels/numbers/half.hpp"

namespace llama::detail {
namespace {

// Q4_K, and Q5_K (Block = BlockQ5_K): its codes take bit s of qh[i] as 16
// (value i of sub-block s), and its mins, as the AVX2 kernel takes them, enter
// whole per block into one scalar, summs = fma(dmin, float(sum), summs), added
// after hsum8; Q4_K's in 4 lanes of pairs of sub-blocks.
template <typename Block>
float q4_5_k_row_dot(const std::byte* row, const Q8KBatch& x, int64_t t) {
  constexpr bool kFive = std::is_same_v<Block, BlockQ5_K>;
  const int64_t blocks = x.cols / kQK_K;
  const int8_t* xv = x.values + t * x.cols;
  const int16_t* xs = x.sums + t * (x.cols / 32);
  float acc[8] = {}, accm[4] = {}, summs = 0.0f;
  for (int64_t b = 0; b < blocks; ++b) {
    Block blk;
    std::memcpy(&blk, row + b * sizeof(Block), sizeof blk);
    const float d8 = x.d[t * blocks + b];
    const float d = d8 * f16_to_f32(blk.d);
    const float dmin = -d8 * f16_to_f32(blk.dmin);
    uint8_t sc[8], mn[8];
    for (int s = 0; s < 8; ++s) q4_k_scale_min(blk.scales, s, sc[s], mn[s]);
    const int16_t* sums = xs + b * 8;
    int32_t prod[4];
    for (int m = 0; m < 4; ++m) prod[m] = mn[2 * m] * sums[2 * m] + mn[2 * m + 1] * sums[2 * m + 1];
    if constexpr (kFive) {
      summs = std::fma(dmin, static_cast<float>(prod[0] + prod[1] + prod[2] + prod[3]), summs);
    } else {
      for (int m = 0; m < 4; ++m) accm[m] = std::fma(dmin, static_cast<float>(prod[m]), accm[m]);
    }
    const int8_t* q = xv + b * kQK_K;
    int32_t lanes[8] = {};
    for (int j = 0; j < 4; ++j) {
      for (int i = 0; i < 32; ++i) {
        int32_t lo = blk.qs[32 * j + i] & 15, hi = blk.qs[32 * j + i] >> 4;
        if constexpr (kFive) {
          lo |= ((blk.qh[i] >> (2 * j)) & 1) << 4;
          hi |= ((blk.qh[i] >> (2 * j + 1)) & 1) << 4;
        }
        lanes[i / 4] += sc[2 * j] * lo * q[64 * j + i] + sc[2 * j + 1] * hi * q[64 * j + 32 + i];
      }
    }
    for (int l = 0; l < 8; ++l) acc[l] = std::fma(d, static_cast<float>(lanes[l]), acc[l]);
  }
  if constexpr (kFive) return hsum8(acc) + summs;
  return hsum8(acc) + ((accm[0] + accm[2]) + (accm[1] + accm[3]));
}

}  // namespace

float q4_k_row_dot(const std::byte* row, const Q8KBatch& x, int64_t t) {
  return q4_5_k_row_dot<BlockQ4_K>(row, x, t);
}

float q5_k_row_dot(const std::byte* row, const Q8KBatch& x, int64_t t) {
  return q4_5_k_row_dot<BlockQ5_K>(row, x, t);
}

float q6_k_row_dot(const std::byte* row, const Q8KBatch& x, int64_t t) {
  const int64_t blocks = x.cols / kQK_K;
  const int8_t* xv = x.values + t * x.cols;
  float acc[8] = {};
  for (int64_t b = 0; b < blocks; ++b) {
    BlockQ6_K blk;
    std::memcpy(&blk, row + b * sizeof(BlockQ6_K), sizeof blk);
    const float d = x.d[t * blocks + b] * f16_to_f32(blk.d);
    const int8_t* q = xv + b * kQK_K;
    int32_t lanes[8] = {};
    for (int h = 0; h < 2; ++h) {  // halves of 128 values
      const uint8_t* ql = blk.ql + 64 * h;
      const uint8_t* qh = blk.qh + 32 * h;
      for (int k = 0; k < 4; ++k) {  // runs of 32 values
        for (int i = 0; i < 32; ++i) {
          const int32_t low = ql[i + 32 * (k % 2)];
          const int32_t nib = k < 2 ? low & 15 : low >> 4;
          const int32_t code = nib | (((qh[i] >> (2 * k)) & 3) << 4);
          const int32_t scale = blk.scales[8 * h + 2 * k + i / 16];
          lanes[i / 4] += scale * (code - 32) * q[128 * h + 32 * k + i];
        }
      }
    }
    for (int l = 0; l < 8; ++l) acc[l] = std::fma(d, static_cast<float>(lanes[l]), acc[l]);
  }
  return hsum8(acc);
}

}  // namespace llama::detail
