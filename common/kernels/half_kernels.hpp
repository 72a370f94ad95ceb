// Private to the core: the SIMD kernels behind half_products.hpp (decode's
// rows, the fast path's rounding, oneDNN's ISA); the caller checks the CPU first.
#pragma once

#include <cstdint>
#include <string>

#include "llama/kernels/block_products.hpp"

namespace llama::detail {

// Decode, AVX-512 F/BW/VL: out[r - row_begin] for rows [row_begin, row_end),
// 4 rows at a time, prefetched into L2 in address order 16 KiB ahead;
// blocks_matvec_rows_f32_avx512's bits (bf16, f16).
void half_matvec_rows_avx512(float* out, const BlockMatrix& w, const float* x, int64_t row_begin,
                             int64_t row_end);

// Decode, AVX2/FMA/F16C: the same results bit for bit (the avx512 kernels'
// 16 lanes as two ymm), 4 bf16 or 3 f16 rows at a time, the same prefetch.
void half_matvec_rows_avx2(float* out, const BlockMatrix& w, const float* x, int64_t row_begin,
                           int64_t row_end);

// x (f32 [n]) rounded to bf16 (nearest even) into out (bf16 [padded], the
// values past n zero), padded a multiple of 32; needs AVX512-BF16.
void round_to_bf16(const float* x, int64_t n, uint16_t* out, int64_t padded);

// Whether oneDNN's effective ISA has bf16 dot products (avx512_core_bf16 or
// AMX; DNNL_MAX_CPU_ISA may lower it).
bool onednn_bf16_isa();
// "oneDNN 2.6.3, ISA avx512_core_bf16": the library and the ISA it runs.
std::string onednn_description();

}  // namespace llama::detail
