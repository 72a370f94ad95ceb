// Matrix products with GGUF block-quantized weights read in place from the
// mapping, the kernels blas and graph compose.
//
// Numerics, by weight type:
// - Q8_0: activations are quantized per block of 32 as llama.cpp's CPU backend
//   does on x86 (scale = f16(max|x| / 127), values = round-half-even(x * 127 /
//   max|x|)), then per (row, token) val = fma(float(int32 dot) * w_scale,
//   x_scale, val) block by block: the int8 products llama.cpp takes, in
//   runq.c's accumulation order. Decode and prefill give the same bits.
// - Q4_0: the same activations against its codes - 8, then per block val =
//   fma(float(dot), w_scale * x_scale, val): llama.cpp's arithmetic on x86,
//   where it repacks Q4_0 rows eight at a time (ggml_gemv_q4_0_8x8_q8_0 and
//   its gemm, which combine a block the same way).
// - Q5_0, Q4_1, Q5_1: legacy_products.hpp; Q4_K, Q5_K, Q6_K: llama.cpp's q8_K
//   products, gguf_kquant.hpp.
// - F16, BF16: activations stay f32; each weight is its exact value, summed in
//   f32 (blocks_matvec_rows_f32 below). Every quantized type has one
//   arithmetic, llama.cpp's, and no f32-input product.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "llama/kernels/products/llama2c_int8.hpp"
#include "llama/tensor.hpp"

namespace llama {

enum class BlockKind { f16, bf16, q8_0, q4_0, q4_k, q6_k, q4_1, q5_0, q5_1, q5_k, q3_k, q2_k };
const char* to_string(BlockKind kind);  // "F16", ..., "Q6_K" (GGUF's names)
int64_t block_values(BlockKind kind);   // values per block
int64_t block_bytes(BlockKind kind);    // bytes per block

// A matrix [rows, cols] of blocks, row-major, each row cols / block_values blocks.
struct BlockMatrix {
  std::span<const std::byte> bytes;  // rows * row_bytes(), 2-byte aligned
  int64_t rows = 0;
  int64_t cols = 0;
  BlockKind kind = BlockKind::q8_0;
  int64_t row_bytes() const { return cols / block_values(kind) * block_bytes(kind); }
  const std::byte* row(int64_t r) const { return bytes.data() + r * row_bytes(); }
};

// The kind of a tensor dtype these kernels read in place: f16, bf16 and GGUF's
// block types (DType::block_q8_0 is BlockKind::q8_0); nullopt for f32 and
// llama2.c's q8_0 (its scales are stored apart).
std::optional<BlockKind> block_kind(DType dtype);
// `t` as a matrix of blocks (a vector is one row), checked as below; throws
// Error naming the tensor for a dtype without a block kind.
BlockMatrix block_matrix(const Tensor& t);

// Throws Error naming `what` unless the bytes hold exactly rows x cols values
// of whole blocks, 2-byte aligned.
void check_block_matrix(const BlockMatrix& w, const std::string& what);

// llama.cpp's x86 activation quantization (quantize_row_q8_0, AVX2 path) into
// `out` (resized to group 32): scales are the f16-rounded scales widened.
void quantize_activations_q8_0_blocks(std::span<const float> x, Q8Vector& out);
void quantize_activations_q8_0_blocks(std::span<const float> x, std::span<int8_t> values,
                                      std::span<float> scales);
// The same with the kernel of `level` (AVX-512 or AVX2 where asked and the CPU
// runs it, else the best level below; the overloads above take simd_level()):
// every level gives the same bits. Tests compare the levels.
void quantize_activations_q8_0_blocks(std::span<const float> x, std::span<int8_t> values,
                                      std::span<float> scales, SimdLevel level);

// Q8_0 and Q4_0 weights (Q4_0's codes - 8 as int8): out[r - row_begin] for
// rows [row_begin, row_end) of W x, x quantized by
// quantize_activations_q8_0_blocks: per block the int32 dot, then val =
// fma(float(dot) * w_scale, x_scale, val) (Q4_0: fma(float(dot), w_scale *
// x_scale, val)). Both kernels give the same bits; another weight kind is an
// Error.
void q8_0_blocks_matvec_rows(std::span<float> out, const BlockMatrix& w, const Q8View& x,
                             int64_t row_begin, int64_t row_end, KernelSet kernel);
// The batch: out[t * out_stride + r]; every (row, token) result equals
// q8_0_blocks_matvec_rows'. Q8_0 rows are unpacked in tiles of 256 into int8
// values and f32 scales and run through q8_matmat_rows; Q4_0 with avx512_vnni
// repacks tiles of 64 rows for its own batch kernel (16 rows in the lanes),
// otherwise runs the portable kernel per tile of 64 rows and vector. A batch
// that is not whole vectors of w.cols values and their scales is an Error.
void q8_0_blocks_matmat_rows(std::span<float> out, int64_t out_stride, const BlockMatrix& w,
                             const Q8BatchView& x, int64_t row_begin, int64_t row_end,
                             KernelSet kernel);

// F16 and BF16 weights (a quantized type is an Error): out[r - row_begin] =
// sum over k of w[r, k] * x[k], in f32. `kernel` avx512_vnni takes
// half_matvec_rows' avx512 path (half_products.hpp), which sums in another
// order than the portable loop: equal to f32 rounding, not bit for bit.
void blocks_matvec_rows_f32(std::span<float> out, const BlockMatrix& w, std::span<const float> x,
                            int64_t row_begin, int64_t row_end, KernelSet kernel);
// Rows [row_begin, row_end) dequantized into out (f32 [row_end - row_begin, cols]).
void dequantize_rows(const BlockMatrix& w, int64_t row_begin, int64_t row_end,
                     std::span<float> out);

}  // namespace llama
