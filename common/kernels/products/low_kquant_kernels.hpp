// Private to the core: the batch layout the Q3_K/Q2_K product loops read.
#pragma once

#include <cstdint>

#include "llama/kernels/products/gguf_products.hpp"

namespace llama::detail {

// A batch of n q8_K vectors of `cols` values, as the Q3_K/Q2_K kernels read it.
struct LowKBatch {
  const int8_t* values = nullptr;  // i8 [n, cols]
  const float* d = nullptr;        // f32 [n, cols / 256]
  const int16_t* sums = nullptr;   // i16 [n, cols / 16]: sums of each 16 values (ggml's bsums)
  int64_t n = 0;
  int64_t cols = 0;
};

}  // namespace llama::detail
