// K-quant blocks (Q2_K..Q6_K) for the q8_K product tests: random ones, and
// their codes, scales and mins as plain integers, unpacked as ggml's
// dequantize_row_q*_K walk them, for the integer loop the products are
// checked against.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "llama/kernels/products/gguf_products.hpp"

namespace llama::test {

// q8_K activations: values and the d of each block of 256.
struct Q8K {
  std::vector<int8_t> values;  // i8 [n]
  std::vector<float> d;        // f32 [n / 256]
};

// Offsets of a block's f16 scales (d, and dmin where the kind has mins).
std::vector<size_t> kquant_scale_fields(BlockKind kind);

// Random blocks of `kind`: random bytes (every code, scale, min and high bit
// occurs) with f16 scales of moderate size and either sign.
std::vector<std::byte> random_kquant_blocks(BlockKind kind, int64_t rows, int64_t cols,
                                            uint32_t seed);

// A block as integers: value v = d * scale[v / per] * code[v] - dmin *
// min[v / per].
struct IntBlock {
  int32_t code[256];
  int32_t scale[16];
  int32_t min[16] = {};
  float d, dmin = 0;
  int per = 16;  // values per sub-block
};

IntBlock int_block(BlockKind kind, const std::byte* p);

// Row `row` (cols values) times vector t of x as plain integer sums per block,
// combined in double: the exact value of the definition's terms; *magnitude
// the sum of their absolute values.
double int_loop_dot(BlockKind kind, const std::byte* row, int64_t cols, const Q8K& x, int64_t t,
                    double* magnitude);

}  // namespace llama::test
