// Products with bf16 and f16 weights read in place: the rows of the core's
// product table for DType::bf16 / f16 (kernels/products.hpp). The definition
// every exact path keeps is the block kernels' (kernels/block_products.hpp
// blocks_matvec_rows_f32: upcast in registers, 16 f32 lanes, a pairwise sum);
// decode runs it 4 rows at a time (half_matvec_rows), prefill in register
// tiles of rows x vectors (half_matmat_rows).
//
// Paths, by numerics policy (llama/numerics.hpp) and CPU:
// - exact, portable: blocks_matvec_rows_f32(Q8Kernel::portable) per vector,
//   64-row tiles so each tile comes from memory once per batch.
// - exact, avx512 (AVX-512 F/BW/VL): R rows x T vectors at a time, each weight
//   vector upcast once in registers for the T vectors; every (row, vector)
//   result is blocks_matvec_rows_f32(Q8Kernel::avx512_vnni)'s bit for bit (the
//   same 16 lanes, the same order, the same horizontal sum).
// - fast, avx512-bf16 (AVX512-BF16, bf16 weights only): activations rounded to
//   bf16 (nearest even) once per call, vdpbf16ps on weight and activation
//   pairs, sums in f32. |fast - exact| <= 2^-8 * sum_k |w_k x_k| per result
//   (rounding x to bf16 moves each term by at most 2^-9 of itself; the rest
//   is the f32 summation's rounding, which both paths share in size).
// - AMX tiles: not written (this project's test machine has no AMX); a CPU
//   with them takes avx512-bf16 under fast.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "llama/kernels/block_products.hpp"
#include "llama/kernels/q8.hpp"
#include "llama/numerics.hpp"

namespace llama {

enum class HalfPath { portable, avx512, avx512_bf16 };
inline constexpr HalfPath kHalfPaths[] = {HalfPath::portable, HalfPath::avx512,
                                          HalfPath::avx512_bf16};
const char* to_string(HalfPath path);  // "portable", "avx512-f32", "avx512-bf16"
// Whether this CPU (and build) runs `path`.
bool half_path_available(HalfPath path);
// What the path needs of the CPU: "", "AVX-512 F/BW/VL", "AVX512-BF16".
const char* half_path_requirement(HalfPath path);

// The batch path for `kind` (BlockKind::bf16 or f16) when decode runs
// `kernel` (avx512_vnni: the AVX-512 block kernels) under `numerics`.
HalfPath half_batch_path(BlockKind kind, Q8Kernel kernel, Numerics numerics);
// Why half_batch_path chose what it did, for --explain: "avx512-bf16 (fast
// numerics; the CPU has AVX512-BF16)", "avx512-f32 (exact numerics)", ...
std::string explain_half_batch_path(BlockKind kind, Q8Kernel kernel, Numerics numerics);

// Decode: out[r - row_begin] = row r of W . x for rows [row_begin, row_end).
// `kernel` avx512_vnni: 4 rows at a time sharing each load of x, the next 4
// prefetched (AVX-512 F/BW/VL), each result blocks_matvec_rows_f32's with that
// kernel bit for bit; portable: blocks_matvec_rows_f32's portable loop.
void half_matvec_rows(std::span<float> out, const BlockMatrix& w, std::span<const float> x,
                      int64_t row_begin, int64_t row_end, Q8Kernel kernel);

// out[t * out_stride + r] = row r of W . x_t for rows [row_begin, row_end)
// and the n vectors x_t = x[t * ld, t * ld + cols) (f32), W bf16 or f16
// [rows, cols]. Throws Error for a path this CPU lacks or fast on f16.
void half_matmat_rows(std::span<float> out, int64_t out_stride, const BlockMatrix& w,
                      std::span<const float> x, int64_t ld, int64_t n, int64_t row_begin,
                      int64_t row_end, HalfPath path);

}  // namespace llama
