// Matrix products with GGUF's Q5_0, Q4_1 and Q5_1 weights read in place, in
// llama.cpp's x86 arithmetic (ggml-cpu-quants.c at commit c392e5094, the
// AVX2 bodies of ggml_vec_dot_q5_0_q8_0, _q4_1_q8_1, _q5_1_q8_1; llamafile's
// tinyBLAS takes Q5_0 prompts in the same lanes and order):
// - activations quantized per block of 32: Q5_0 as Q8_0's
//   (quantize_activations_q8_0_blocks), Q4_1 and Q5_1 as quantize_row_q8_1
//   (the same values and f16 scale d, plus s = f16(d * sum of the block's
//   int8 values) with d before its f16 rounding);
// - per block eight int32 lanes, lane l the exact dot of values 4l..4l+3
//   (Q5_0: codes - 16 signed; Q4_1, Q5_1: the unsigned codes), each lane's
//   chain acc[l] = fma(float(lane), d_w * d_x, acc[l]) block after block;
// - the row's result: the lanes added as hsum_float_8 does, ((a0 + a4) +
//   (a2 + a6)) + ((a1 + a5) + (a3 + a7)), then for Q4_1 and Q5_1 + summs,
//   summs += m_w * s_x block by block (an exact product of two f16s).
// Decode and prefill give the same bits.
#pragma once

#include <cstdint>
#include <span>

#include "llama/kernels/products/gguf_products.hpp"

namespace llama {

// Values per f32 of a q8_1-block input's scales: each block of 32 carries
// two, d then s.
inline constexpr int64_t kQ8_1ScaleGroup = 16;

// x (f32 [n], n a multiple of 32) into values (i8 [n]) and scales (f32
// [n / 16]: per block d then s, each f16-rounded and widened), as llama.cpp's
// quantize_row_q8_1 on x86. `level` as quantize_activations_q8_0_blocks'.
void quantize_activations_q8_1_blocks(std::span<const float> x, std::span<int8_t> values,
                                      std::span<float> scales);
void quantize_activations_q8_1_blocks(std::span<const float> x, std::span<int8_t> values,
                                      std::span<float> scales, SimdLevel level);

// Whether `kind` is one of this file's (Q5_0, Q4_1, Q5_1).
bool legacy_block_kind(BlockKind kind);

// out[r - row_begin] for rows [row_begin, row_end) of W x, x quantized for
// w's kind (Q5_0: q8_0 blocks, group 32; Q4_1, Q5_1: q8_1 blocks, group 16).
// KernelSet::avx512_vnni takes the AVX-512 VNNI kernel (x86/legacy_vnni.cpp),
// the portable loop's bits. Another weight kind or input group is an Error.
void legacy_blocks_matvec_rows(std::span<float> out, const BlockMatrix& w, const Q8View& x,
                               int64_t row_begin, int64_t row_end, KernelSet kernel);
// The batch: out[t * out_stride + r], each (row, token) result
// legacy_blocks_matvec_rows' bit for bit (the decode kernel per tile of 64
// rows and token).
void legacy_blocks_matmat_rows(std::span<float> out, int64_t out_stride, const BlockMatrix& w,
                               const Q8BatchView& x, int64_t row_begin, int64_t row_end,
                               KernelSet kernel);

}  // namespace llama
