// Private to the core: the x86 kernels behind gguf_kquant.hpp, and the one
// batch layout they and the portable loops share.
#pragma once

#include <cstdint>

#include "llama/kernels/products/gguf_products.hpp"

namespace llama::detail {

// A batch of n q8_K vectors of `cols` values, as the kernels read it.
struct Q8KBatch {
  const int8_t* values = nullptr;  // i8 [n, cols]
  const float* d = nullptr;        // f32 [n, cols / 256]
  const int16_t* sums = nullptr;   // i16 [n, cols / 32]: sums of each 32 values
  int64_t n = 0;
  int64_t cols = 0;
};

// Rows [row_begin, row_end) of Q4_K, Q5_K or Q6_K weights against every vector:
// out[t * out_stride + r - row_begin], gguf_kquant.hpp's definition with
// AVX-512 (BW, VL) and VNNI; the caller checks the CPU and the kind.
void kquant_q8_k_rows_vnni(const BlockMatrix& w, const Q8KBatch& x, float* out, int64_t out_stride,
                           int64_t row_begin, int64_t row_end);

// The same with AVX2 (FMA, F16C): KernelSet::avx2's body.
void kquant_q8_k_rows_avx2(const BlockMatrix& w, const Q8KBatch& x, float* out, int64_t out_stride,
                           int64_t row_begin, int64_t row_end);
// And with AVX-VNNI besides: KernelSet::avx_vnni's (the same source, x86/avx2_body.hpp).
void kquant_q8_k_rows_avxvnni(const BlockMatrix& w, const Q8KBatch& x, float* out,
                              int64_t out_stride, int64_t row_begin, int64_t row_end);

// quantize_activations_q8_k of `blocks` blocks of 256 with AVX-512: the
// portable loop's bits; the caller checks the CPU.
void quantize_q8_k_avx512(const float* x, int64_t blocks, int8_t* values, float* d);
// The same with AVX2 (x86/gguf_quantize_q8_k_avx2.cpp).
void quantize_q8_k_avx2(const float* x, int64_t blocks, int8_t* values, float* d);

}  // namespace llama::detail
