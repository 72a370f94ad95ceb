// Private to the core: the kernels behind gguf_kquant.hpp (the portable row
// dots that define the products, the x86 bodies that reproduce them), and the
// one batch layout they share.
#pragma once

#include <cstddef>
#include <cstdint>

#include "llama/kernels/products/gguf_products.hpp"

namespace llama::detail {

// A batch of n q8_K vectors of `cols` values, as the kernels read it. The
// sums are there for the kinds whose mins need them, else null.
struct Q8KBatch {
  const int8_t* values = nullptr;  // i8 [n, cols]
  const float* d = nullptr;        // f32 [n, cols / 256]
  const int16_t* sums = nullptr;   // i16 [n, cols / 32]: sums of each 32 values (Q4_K, Q5_K)
  const int16_t* bsums = nullptr;  // i16 [n, cols / 16]: sums of each 16 values, ggml's (Q2_K)
  int64_t n = 0;
  int64_t cols = 0;
};

// ((a0 + a4) + (a2 + a6)) + ((a1 + a5) + (a3 + a7)): ggml's hsum_float_8.
inline float hsum8(const float (&a)[8]) {
  return ((a[0] + a[4]) + (a[2] + a[6])) + ((a[1] + a[5]) + (a[3] + a[7]));
}

// Vector t's product with one row of blocks, gguf_kquant.hpp's definition as
// plain loops: Q4_K, Q5_K, Q6_K in products/kquant_dots.cpp, Q3_K, Q2_K in
// products/low_kquant_dots.cpp.
float q4_k_row_dot(const std::byte* row, const Q8KBatch& x, int64_t t);
float q5_k_row_dot(const std::byte* row, const Q8KBatch& x, int64_t t);
float q6_k_row_dot(const std::byte* row, const Q8KBatch& x, int64_t t);
float q3_k_row_dot(const std::byte* row, const Q8KBatch& x, int64_t t);
float q2_k_row_dot(const std::byte* row, const Q8KBatch& x, int64_t t);

// Rows [row_begin, row_end) of Q4_K, Q5_K or Q6_K weights against every vector:
// out[t * out_stride + r - row_begin], the definition with AVX-512 (BW, VL)
// and VNNI; the caller checks the CPU and the kind.
void kquant_q8_k_rows_vnni(const BlockMatrix& w, const Q8KBatch& x, float* out, int64_t out_stride,
                           int64_t row_begin, int64_t row_end);

// The same with AVX2 (FMA, F16C): KernelSet::avx2's body.
void kquant_q8_k_rows_avx2(const BlockMatrix& w, const Q8KBatch& x, float* out, int64_t out_stride,
                           int64_t row_begin, int64_t row_end);
// And with AVX-VNNI besides: KernelSet::avx_vnni's (the same source, x86/avx2_body.hpp).
void kquant_q8_k_rows_avxvnni(const BlockMatrix& w, const Q8KBatch& x, float* out,
                              int64_t out_stride, int64_t row_begin, int64_t row_end);

// The same for Q3_K or Q2_K weights with AVX-512 (BW, VL) and VNNI
// (x86/low_kquant_vnni.cpp).
void low_kquant_rows_vnni(const BlockMatrix& w, const Q8KBatch& x, float* out, int64_t out_stride,
                          int64_t row_begin, int64_t row_end);
// The same with AVX2 (FMA, F16C), and with AVX-VNNI besides (x86/low_kquant_avx2.cpp).
void low_kquant_rows_avx2(const BlockMatrix& w, const Q8KBatch& x, float* out, int64_t out_stride,
                          int64_t row_begin, int64_t row_end);
void low_kquant_rows_avxvnni(const BlockMatrix& w, const Q8KBatch& x, float* out,
                             int64_t out_stride, int64_t row_begin, int64_t row_end);

// quantize_activations_q8_k of `blocks` blocks of 256 with AVX-512: the
// portable loop's bits; the caller checks the CPU.
void quantize_q8_k_avx512(const float* x, int64_t blocks, int8_t* values, float* d);
// The same with AVX2 (x86/gguf_quantize_q8_k_avx2.cpp).
void quantize_q8_k_avx2(const float* x, int64_t blocks, int8_t* values, float* d);

}  // namespace llama::detail
