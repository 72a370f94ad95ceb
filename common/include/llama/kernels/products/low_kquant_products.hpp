// Products of Q3_K and Q2_K weights with activations quantized to llama.cpp's
// q8_K (gguf_kquant.hpp: quantize_activations_q8_k), in llama.cpp's
// arithmetic as its x86 build runs it (ggml-cpu-quants.c at c392e5094, the
// __AVX2__ branches of ggml_vec_dot_q3_K_q8_K and ggml_vec_dot_q2_K_q8_K).
//
// A row's dot product, per super-block b (d8 = the activation's d, value v of
// the block = 128 h + 32 j + i, sub-block v / 16, codes and scales as
// low_kquant_blocks.hpp reads them):
// - lane l (of 8) = the int32 sum over the values with i / 4 == l (bytes
//   4l..4l+3 of every 32-value run, the AVX2 kernel's lanes) of
//   scale(sub-block) x code x activation value: exact integers;
// - Q2_K first: prod[l] = min[2l] x bsum[2l] + min[2l+1] x bsum[2l+1], bsum[s]
//   the sum of the 16 activation values of sub-block s, and
//   acc[l] = fma(-d8 * f16(dmin), float(prod[l]), acc[l]);
// - acc[l] = fma(d8 * f16(d), float(lane l), acc[l]).
// The row's result: ((acc0 + acc4) + (acc2 + acc6)) + ((acc1 + acc5) + (acc3 +
// acc7)), ggml's hsum_float_8.
#pragma once

#include <cstdint>
#include <span>

#include "llama/kernels/dispatch/kernel_set.hpp"
#include "llama/kernels/products/gguf_products.hpp"
#include "llama/kernels/products/llama2c_int8.hpp"

namespace llama {

// Whether `kind` has these products (Q3_K, Q2_K).
bool has_low_kquant_products(BlockKind kind);

// out[r - row_begin] for rows [row_begin, row_end) of W x, x in q8_K (group
// 256). KernelSet::avx512_vnni runs the x86 kernel, every other set the
// definition above as plain loops: the same bits. Another weight kind or a
// mismatched input is an Error.
void low_kquant_q8_k_matvec_rows(std::span<float> out, const BlockMatrix& w, const Q8View& x,
                                 int64_t row_begin, int64_t row_end, KernelSet kernel);
// The batch: out[t * out_stride + r]; every (row, token) result equals
// low_kquant_q8_k_matvec_rows'.
void low_kquant_q8_k_matmat_rows(std::span<float> out, int64_t out_stride, const BlockMatrix& w,
                                 const Q8BatchView& x, int64_t row_begin, int64_t row_end,
                                 KernelSet kernel);

}  // namespace llama
