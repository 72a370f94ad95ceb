// K-quant test blocks (kquant_blocks.hpp): random ones and the integer
// unpacking of each kind, written out as ggml's dequantize_row_q*_K loops.
#include "kquant_blocks.hpp"

#include <cmath>
#include <cstddef>
#include <cstring>
#include <random>
#include <type_traits>

#include "llama/kernels/numbers/gguf_blocks.hpp"
#include "llama/kernels/numbers/half.hpp"
#include "llama/kernels/numbers/low_kquant_blocks.hpp"

namespace llama::test {
namespace {

// Q4_K and Q5_K: the same scales, mins and nibbles; Q5_K's fifth bit from qh.
template <typename Block>
IntBlock int_block_4_5(const std::byte* p) {
  IntBlock o{};
  Block b;
  std::memcpy(&b, p, sizeof b);
  o.per = 32;
  o.d = f16_to_f32(b.d);
  o.dmin = f16_to_f32(b.dmin);
  for (int s = 0; s < 8; ++s) {
    uint8_t sc, m;
    q4_k_scale_min(b.scales, s, sc, m);
    o.scale[s] = sc;
    o.min[s] = m;
  }
  for (int j = 0; j < 4; ++j) {
    for (int i = 0; i < 32; ++i) {
      o.code[64 * j + i] = b.qs[32 * j + i] & 15;
      o.code[64 * j + 32 + i] = b.qs[32 * j + i] >> 4;
      if constexpr (std::is_same_v<Block, BlockQ5_K>) {
        o.code[64 * j + i] += 16 * ((b.qh[i] >> (2 * j)) & 1);
        o.code[64 * j + 32 + i] += 16 * ((b.qh[i] >> (2 * j + 1)) & 1);
      }
    }
  }
  return o;
}

// Q6_K: codes - 32, int8 scales per 16 values.
IntBlock int_block_6(const std::byte* p) {
  IntBlock o{};
  BlockQ6_K b;
  std::memcpy(&b, p, sizeof b);
  o.d = f16_to_f32(b.d);
  for (int s = 0; s < 16; ++s) o.scale[s] = b.scales[s];
  for (int h = 0; h < 2; ++h) {
    for (int i = 0; i < 32; ++i) {
      const uint8_t* ql = b.ql + 64 * h;
      const int qh = b.qh[32 * h + i];
      o.code[128 * h + i] = ((ql[i] & 15) | ((qh & 3) << 4)) - 32;
      o.code[128 * h + 32 + i] = ((ql[i + 32] & 15) | (((qh >> 2) & 3) << 4)) - 32;
      o.code[128 * h + 64 + i] = ((ql[i] >> 4) | (((qh >> 4) & 3) << 4)) - 32;
      o.code[128 * h + 96 + i] = ((ql[i + 32] >> 4) | (((qh >> 6) & 3) << 4)) - 32;
    }
  }
  return o;
}

// Q3_K: 6-bit scales - 32 unpacked with ggml's 32-bit masks, 2-bit codes - 4
// unless the high bit is set.
IntBlock int_block_3(const std::byte* p) {
  IntBlock o{};
  BlockQ3_K b;
  std::memcpy(&b, p, sizeof b);
  o.d = f16_to_f32(b.d);
  uint32_t aux[4];
  std::memcpy(aux, b.scales, 12);
  const uint32_t tmp = aux[2];
  aux[2] = ((aux[0] >> 4) & 0x0f0f0f0f) | (((tmp >> 4) & 0x03030303) << 4);
  aux[3] = ((aux[1] >> 4) & 0x0f0f0f0f) | (((tmp >> 6) & 0x03030303) << 4);
  aux[0] = (aux[0] & 0x0f0f0f0f) | (((tmp >> 0) & 0x03030303) << 4);
  aux[1] = (aux[1] & 0x0f0f0f0f) | (((tmp >> 2) & 0x03030303) << 4);
  int8_t sc[16];
  std::memcpy(sc, aux, 16);
  for (int s = 0; s < 16; ++s) o.scale[s] = sc[s] - 32;
  int y = 0, m = 1;
  for (int n = 0; n < 2; ++n) {
    for (int j = 0; j < 4; ++j, m <<= 1) {
      for (int l = 0; l < 32; ++l) {
        o.code[y++] = ((b.qs[32 * n + l] >> (2 * j)) & 3) - ((b.hmask[l] & m) ? 0 : 4);
      }
    }
  }
  return o;
}

// Q2_K: 4-bit scales and mins per 16 values, 2-bit codes.
IntBlock int_block_2(const std::byte* p) {
  IntBlock o{};
  BlockQ2_K b;
  std::memcpy(&b, p, sizeof b);
  o.d = f16_to_f32(b.d);
  o.dmin = f16_to_f32(b.dmin);
  for (int s = 0; s < 16; ++s) {
    o.scale[s] = b.scales[s] & 15;
    o.min[s] = b.scales[s] >> 4;
  }
  int y = 0;
  for (int n = 0; n < 2; ++n) {
    for (int j = 0; j < 4; ++j) {
      for (int l = 0; l < 32; ++l) o.code[y++] = (b.qs[32 * n + l] >> (2 * j)) & 3;
    }
  }
  return o;
}

}  // namespace

std::vector<size_t> kquant_scale_fields(BlockKind kind) {
  switch (kind) {
    case BlockKind::q6_k:
      return {offsetof(BlockQ6_K, d)};
    case BlockKind::q3_k:
      return {offsetof(BlockQ3_K, d)};
    case BlockKind::q2_k:
      return {offsetof(BlockQ2_K, d), offsetof(BlockQ2_K, dmin)};
    case BlockKind::q5_k:
      return {offsetof(BlockQ5_K, d), offsetof(BlockQ5_K, dmin)};
    default:  // Q4_K
      return {offsetof(BlockQ4_K, d), offsetof(BlockQ4_K, dmin)};
  }
}

std::vector<std::byte> random_kquant_blocks(BlockKind kind, int64_t rows, int64_t cols,
                                            uint32_t seed) {
  const BlockMatrix shape{{}, rows, cols, kind};
  std::vector<std::byte> b(static_cast<size_t>(rows * shape.row_bytes()));
  std::mt19937 rng(seed);
  for (auto& x : b) x = static_cast<std::byte>(rng());
  const auto bb = static_cast<size_t>(block_bytes(kind));
  for (size_t at = 0; at < b.size(); at += bb) {
    for (size_t f : kquant_scale_fields(kind)) {
      const float magnitude = std::ldexp(static_cast<float>(rng() % 1000 + 1), -12);
      const uint16_t h = f32_to_f16(rng() % 2 ? magnitude : -magnitude);
      std::memcpy(b.data() + at + f, &h, 2);
    }
  }
  return b;
}

IntBlock int_block(BlockKind kind, const std::byte* p) {
  switch (kind) {
    case BlockKind::q4_k:
      return int_block_4_5<BlockQ4_K>(p);
    case BlockKind::q5_k:
      return int_block_4_5<BlockQ5_K>(p);
    case BlockKind::q6_k:
      return int_block_6(p);
    case BlockKind::q3_k:
      return int_block_3(p);
    default:
      return int_block_2(p);
  }
}

double int_loop_dot(BlockKind kind, const std::byte* row, int64_t cols, const Q8K& x, int64_t t,
                    double* magnitude) {
  double sum = 0, mag = 0;
  for (int64_t b = 0; b < cols / 256; ++b) {
    const IntBlock w = int_block(kind, row + b * block_bytes(kind));
    int64_t scaled = 0, mins = 0;
    for (int j = 0; j < 256; ++j) {
      const int32_t q = x.values[static_cast<size_t>(t * cols + 256 * b + j)];
      scaled += int64_t{w.scale[j / w.per]} * w.code[j] * q;
      mins += int64_t{w.min[j / w.per]} * q;
    }
    const double d8 = x.d[static_cast<size_t>(t * cols / 256 + b)];
    sum += d8 * w.d * static_cast<double>(scaled) - d8 * w.dmin * static_cast<double>(mins);
    mag += std::fabs(d8 * w.d * static_cast<double>(scaled)) +
           std::fabs(d8 * w.dmin * static_cast<double>(mins));
  }
  *magnitude = mag;
  return sum;
}

}  // namespace llama::test
