// Private to the core: the SIMD kernel behind legacy_products.hpp.
#pragma once

#include <cstdint>
#include <span>

#include "llama/kernels/products/legacy_products.hpp"

namespace llama::detail {

// legacy_blocks_matvec_rows with AVX-512 VNNI (256-bit vpdpbusd): the
// portable kernel's bits; the caller checks the CPU.
void legacy_blocks_matvec_rows_vnni(std::span<float> out, const BlockMatrix& w, const Q8View& x,
                                    int64_t row_begin, int64_t row_end);
// The same with AVX2 (FMA, F16C): KernelSet::avx2's body (x86/legacy_avx2.cpp).
void legacy_blocks_matvec_rows_avx2(std::span<float> out, const BlockMatrix& w, const Q8View& x,
                                    int64_t row_begin, int64_t row_end);

}  // namespace llama::detail
