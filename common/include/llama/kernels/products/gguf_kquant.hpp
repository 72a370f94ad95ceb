// Products of K-quant weights (super-blocks of 256: Q2_K, Q3_K, Q4_K, Q5_K,
// Q6_K) with activations quantized to llama.cpp's q8_K, in llama.cpp's
// arithmetic as its x86 build runs it (ggml-cpu-quants.c at c392e5094:
// quantize_row_q8_K is the _ref quantizer there, the dot products the
// __AVX2__ branches).
//
// q8_K: per super-block of 256 values, amax = the first |x| that is largest,
// max = that x with its sign, iscale = -127 / max, value = round-half-even(
// iscale * x) (ggml's nearest_int: the magic-number add), at most 127, and
// d = 1 / iscale; a block of zeros has d 0 and values 0. The values are held as
// i8 [n] and d as f32 [n / 256] (a Q8View of group 256); ggml's bsums (sums of
// 16 values) follow from the values, so the kernels derive what they need.
//
// A row's dot product, per super-block b (d8 = the activation's d):
// - the int32 sums of weight code x activation value, scaled by each
//   sub-block's integer scale, kept in 8 lanes: lane l takes bytes 4l..4l+3 of
//   every 32-value run (the AVX2 kernel's lanes); Q3_K's and Q2_K's codes and
//   scales as low_kquant_blocks.hpp reads them;
// - Q2_K first: prod[l] = min[2l] x bsum[2l] + min[2l+1] x bsum[2l+1], bsum[s]
//   the sum of the 16 activation values of sub-block s, and
//   acc[l] = fma(-d8 * f16(dmin), float(prod[l]), acc[l]);
// - acc[l] = fma(d8 * f16(d), float(lane l), acc[l]);
// - Q5_K: Q4_K's with 5-bit codes, and its mins summed whole per block:
//   summs = fma(-d8 * f16(dmin), float(prod0 + prod1 + prod2 + prod3), summs);
// - Q4_K's mins: prod[m] = min[2m] * sum(sub-block 2m) + min[2m+1] *
//   sum(sub-block 2m+1), accm[m] = fma(-d8 * f16(dmin), float(prod[m]), accm[m]).
// The row's result: ((acc0 + acc4) + (acc2 + acc6)) + ((acc1 + acc5) + (acc3 +
// acc7)) (ggml's hsum_float_8), plus, for Q4_K, (accm0 + accm2) + (accm1 +
// accm3), for Q5_K summs.
#pragma once

#include <cstdint>
#include <span>

#include "llama/kernels/dispatch/cpu_features.hpp"
#include "llama/kernels/dispatch/kernel_set.hpp"
#include "llama/kernels/products/gguf_products.hpp"
#include "llama/kernels/products/llama2c_int8.hpp"

namespace llama {

// x (f32 [n], n a multiple of 256) into values (i8 [n]) and scales (f32
// [n / 256]), llama.cpp's quantize_row_q8_K. The overload with a level takes
// that level's kernel (AVX-512 where asked and the CPU runs it, else the
// portable loop): every level gives the same bits. Throws Error on sizes that
// do not match.
void quantize_activations_q8_k(std::span<const float> x, std::span<int8_t> values,
                               std::span<float> scales);
void quantize_activations_q8_k(std::span<const float> x, std::span<int8_t> values,
                               std::span<float> scales, SimdLevel level);

// Whether `kind` has q8_K products here (Q2_K, Q3_K, Q4_K, Q5_K, Q6_K).
bool has_q8_k_products(BlockKind kind);

// out[r - row_begin] for rows [row_begin, row_end) of W x, x in q8_K (group
// 256). KernelSet::portable runs the definition above as plain loops, the
// vector sets the x86 kernels for every K type: the same bits. Another weight
// kind or a mismatched input is an Error.
void kquant_q8_k_matvec_rows(std::span<float> out, const BlockMatrix& w, const Q8View& x,
                             int64_t row_begin, int64_t row_end, KernelSet kernel);
// The batch: out[t * out_stride + r]; every (row, token) result equals
// kquant_q8_k_matvec_rows'. Each weight block is unpacked once for several
// tokens.
void kquant_q8_k_matmat_rows(std::span<float> out, int64_t out_stride, const BlockMatrix& w,
                             const Q8BatchView& x, int64_t row_begin, int64_t row_end,
                             KernelSet kernel);

}  // namespace llama
