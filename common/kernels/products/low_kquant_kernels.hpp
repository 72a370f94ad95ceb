// Private to the core: the x86 kernels behind low_kquant_products.hpp, and the
// batch layout it and the portable loops share.
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

// Rows [row_begin, row_end) of Q3_K or Q2_K weights against every vector:
// out[t * out_stride + r - row_begin], low_kquant_products.hpp's definition
// with AVX-512 (BW, VL) and VNNI; the caller checks the CPU and the kind.
void low_kquant_rows_vnni(const BlockMatrix& w, const LowKBatch& x, float* out, int64_t out_stride,
                          int64_t row_begin, int64_t row_end);
// The same with AVX2, FMA and F16C (KernelSet::avx2).
void low_kquant_rows_avx2(const BlockMatrix& w, const LowKBatch& x, float* out, int64_t out_stride,
                          int64_t row_begin, int64_t row_end);
// And with AVX-VNNI besides: KernelSet::avx_vnni's (the same source, x86/avx2_body.hpp).
void low_kquant_rows_avxvnni(const BlockMatrix& w, const LowKBatch& x, float* out,
                             int64_t out_stride, int64_t row_begin, int64_t row_end);

}  // namespace llama::detail
