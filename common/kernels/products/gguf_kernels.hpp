// Private to the core: the SIMD kernels behind gguf_products.hpp.
#pragma once

#include <cstdint>
#include <span>

#include "llama/kernels/products/gguf_products.hpp"

namespace llama::detail {

// q8_0_blocks_matvec_rows with AVX-512 VNNI: for Q8_0 (x86/gguf_q8_0_vnni.cpp)
// and for Q4_0 (x86/q4_0_vnni.cpp); the caller checks the CPU.
void q8_0_blocks_matvec_rows_vnni(std::span<float> out, const BlockMatrix& w, const Q8View& x,
                                  int64_t row_begin, int64_t row_end);
void q4_0_matvec_rows_vnni(std::span<float> out, const BlockMatrix& w, const Q8View& x,
                           int64_t row_begin, int64_t row_end);

// The same with AVX2 (FMA, F16C): KernelSet::avx2's body
// (x86/gguf_q8_0_avx2.cpp).
void q8_0_blocks_matvec_rows_avx2(std::span<float> out, const BlockMatrix& w, const Q8View& x,
                                  int64_t row_begin, int64_t row_end);
// And with AVX-VNNI besides: KernelSet::avx_vnni's (the same source, x86/avx2_body.hpp).
void q8_0_blocks_matvec_rows_avxvnni(std::span<float> out, const BlockMatrix& w, const Q8View& x,
                                     int64_t row_begin, int64_t row_end);

// Rows [row_begin, row_begin + n) of Q4_0 blocks into values (i8 [n, cols],
// code - 8) and scales (f32 [n, cols / 32]) with AVX2 (x86/gguf_q8_0_avx2.cpp);
// the caller checks the CPU.
void unpack_q4_0_rows_avx2(const BlockMatrix& w, int64_t row_begin, int64_t n, int8_t* values,
                           float* scales);

// q8_0_blocks_matmat_rows for Q4_0 with AVX-512 VNNI (x86/q4_0_vnni_batch.cpp):
// every (row, token) result has q8_0_blocks_matvec_rows' bits; the caller
// checks the CPU.
void q4_0_matmat_rows_vnni(std::span<float> out, int64_t out_stride, const BlockMatrix& w,
                           const Q8BatchView& x, int64_t row_begin, int64_t row_end);

// Rows [row_begin, row_begin + n) of Q8_0 blocks into values (i8 [n, cols])
// and scales (f32 [n, cols / 32]) with AVX-512 (q8_0_blocks_matmat_rows'
// tiles; exact, as the portable unpack); the caller checks the CPU.
void unpack_q8_0_rows_vnni(const BlockMatrix& w, int64_t row_begin, int64_t n, int8_t* values,
                           float* scales);

// quantize_activations_q8_0_blocks of `blocks` blocks of 32 with AVX-512 or
// AVX2 (x86/gguf_quantize_simd.cpp): the portable loop's bits; the caller checks
// the CPU.
void quantize_q8_0_blocks_avx512(const float* x, int64_t blocks, int8_t* values, float* scales);
void quantize_q8_0_blocks_avx2(const float* x, int64_t blocks, int8_t* values, float* scales);

}  // namespace llama::detail
