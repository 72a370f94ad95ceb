// Q3_K and Q2_K x q8_K row dots (gguf_kquant.hpp's definition for them) as
// plain loops: the definitions the x86 kernels reproduce.
#include <cmath>
#include <cstring>

#include "kernels/products/gguf_kquant_kernels.hpp"
#include "llama/kernels/numbers/half.hpp"
#include "llama/kernels/numbers/low_kquant_blocks.hpp"

namespace llama::detail {
namespace {

// The integer lanes of one block: lane i / 4 of every 32-value run takes
// scale(v / 16) * code(v) * q[v].
template <typename Scale, typename Code>
void block_lanes(const int8_t* q, Scale scale, Code code, int32_t (&lanes)[8]) {
  for (int v = 0; v < kQK_K; ++v) lanes[(v % 32) / 4] += scale(v / 16) * code(v) * q[v];
}

}  // namespace

float q3_k_row_dot(const std::byte* row, const Q8KBatch& x, int64_t t) {
  const int64_t blocks = x.cols / kQK_K;
  const int8_t* xv = x.values + t * x.cols;
  float acc[8] = {};
  for (int64_t b = 0; b < blocks; ++b) {
    BlockQ3_K blk;
    std::memcpy(&blk, row + b * sizeof(BlockQ3_K), sizeof blk);
    const float d = x.d[t * blocks + b] * f16_to_f32(blk.d);
    int32_t lanes[8] = {};
    block_lanes(
        xv + b * kQK_K, [&](int s) { return q3_k_scale(blk.scales, s); },
        [&](int v) { return q3_k_code(blk, v); }, lanes);
    for (int l = 0; l < 8; ++l) acc[l] = std::fma(d, static_cast<float>(lanes[l]), acc[l]);
  }
  return hsum8(acc);
}

float q2_k_row_dot(const std::byte* row, const Q8KBatch& x, int64_t t) {
  const int64_t blocks = x.cols / kQK_K;
  const int8_t* xv = x.values + t * x.cols;
  const int16_t* xs = x.bsums + t * (x.cols / 16);
  float acc[8] = {};
  for (int64_t b = 0; b < blocks; ++b) {
    BlockQ2_K blk;
    std::memcpy(&blk, row + b * sizeof(BlockQ2_K), sizeof blk);
    const float d8 = x.d[t * blocks + b];
    const float d = d8 * f16_to_f32(blk.d);
    const float dmin = -d8 * f16_to_f32(blk.dmin);
    const int16_t* bsums = xs + b * 16;
    for (int l = 0; l < 8; ++l) {
      const int32_t prod =
          (blk.scales[2 * l] >> 4) * bsums[2 * l] + (blk.scales[2 * l + 1] >> 4) * bsums[2 * l + 1];
      acc[l] = std::fma(dmin, static_cast<float>(prod), acc[l]);
    }
    int32_t lanes[8] = {};
    block_lanes(
        xv + b * kQK_K, [&](int s) { return blk.scales[s] & 15; },
        [&](int v) { return q2_k_code(blk, v); }, lanes);
    for (int l = 0; l < 8; ++l) acc[l] = std::fma(d, static_cast<float>(lanes[l]), acc[l]);
  }
  return hsum8(acc);
}

}  // namespace llama::detail
