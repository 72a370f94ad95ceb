// Private to the core: the SIMD kernel behind legacy_products.hpp.
#pragma once

#include <cstdint>
#include <span>

#include "llama/kernels/products/legacy_products.hpp"

namespace llama::detail {

// legacy_blocks_matvec_rows with AVX-512 VNNI (256-bit vpdpbusd; the avx2
// body below compiled once more, x86/legacy_vnni.cpp): the portable kernel's
// bits; the caller checks the CPU.
void legacy_blocks_matvec_rows_vnni(std::span<float> out, const BlockMatrix& w, const Q8View& x,
                                    int64_t row_begin, int64_t row_end);
// The same with AVX2 (FMA, F16C): KernelSet::avx2's body (x86/legacy_avx2.cpp).
void legacy_blocks_matvec_rows_avx2(std::span<float> out, const BlockMatrix& w, const Q8View& x,
                                    int64_t row_begin, int64_t row_end);
// And with AVX-VNNI besides: KernelSet::avx_vnni's (the same source, x86/avx2_body.hpp).
void legacy_blocks_matvec_rows_avxvnni(std::span<float> out, const BlockMatrix& w, const Q8View& x,
                                       int64_t row_begin, int64_t row_end);

// quantize_activations_q8_1_blocks of `blocks` blocks of 32 (scales f32
// [blocks, 2]: d, s) with AVX-512 or AVX2 (x86/gguf_quantize_q8_1.cpp): the
// portable loop's bits; the caller checks the CPU.
void quantize_q8_1_blocks_avx512(const float* x, int64_t blocks, int8_t* values, float* scales);
void quantize_q8_1_blocks_avx2(const float* x, int64_t blocks, int8_t* values, float* scales);

}  // namespace llama::detail
