// Products with bf16 and f16 weights read in place: the rows of the core's
// product table for DType::bf16 / f16 (dispatch/product_table.hpp). Every
// exact path computes on the exactly upcast weights in f32. Decode upcasts in
// registers and sums in 16 f32 lanes reduced pairwise, 4 rows at a time
// (half_matvec_rows; gguf_products.hpp's blocks_matvec_rows_f32 runs the same
// kernel for bf16/f16 with KernelSet::avx512_vnni); an exact batch on AVX-512
// is the f32 model's batch product instead (the core's GEMM,
// products/gemm_f32.hpp: one FMA chain per result), so its results equal
// decode's to f32 rounding, not bit for bit.
//
// Paths, by numerics policy (llama/numerics.hpp) and CPU:
// - exact, portable: blocks_matvec_rows_f32(KernelSet::portable) per vector,
//   64-row tiles so each tile comes from memory once per batch (decode's bits).
// - exact, avx512 (AVX-512 F/BW/VL): gemm_f32_rows(SimdLevel::avx512) with
//   the weights widened exactly as it packs them. Register tiles that kept
//   decode's bits need horizontal sums, which compete with the FMAs for the
//   same ports; the GEMM has none (docs/performance.md has the figures).
// - exact, avx2 (the avx2 level: AVX2, FMA, F16C): decode as avx512's bit
//   for bit (its 16 lanes as two ymm), batches gemm_f32_rows(SimdLevel::avx2)
//   (the same bits as avx512's GEMM). Every caller's kernel is
//   KernelSet::portable at that level, so the reference backend runs it too.
// - exact, amx-bf16x3 (bf16 weights, a CPU with AMX-BF16 tiles the OS lets
//   this process use): each f32 activation split exactly into three bf16
//   planes (x = p0 + p1 + p2, 8 significant bits each: Bf16Layout::tiles_x3),
//   the products w * p exact in the tiles' f32 sums, plane 0's sum and planes
//   1 and 2's kept apart and added once, so a result errs from the exact sum
//   by about what the f32 GEMM's does (plane 0's chain of K roundings; the
//   others' are 2^-8 smaller), the terms being exact. Three times amx-bf16's
//   tile products, still faster than the f32 GEMM on a CPU with AMX
//   (docs/performance.md). Inputs below 2^-110 or so lose their lowest plane
//   (the tiles and the conversion flush subnormals), as do subnormal weights.
// - fast, amx-bf16 (bf16 weights, a CPU with AMX-BF16 tiles the OS lets this
//   process use): activations rounded to bf16 once per batch into the tile
//   layout (Bf16Layout::tiles), the weights read in place through a panel of
//   32 rows copied into tile order, tdpbf16ps sums in f32. Hand-written
//   because oneDNN 2.6's AMX matmul is slower on these shapes, on its own
//   reordered weights or in place, and its sums change with the row split
//   (docs/performance.md).
// - fast, onednn-bf16 (bf16 weights, AVX512-BF16 without AMX): activations
//   rounded to bf16 (nearest even) once per call, or once per batch by the
//   backend (Bf16BatchView below, Bf16Layout::rows), then oneDNN's matmul
//   (Debian's libdnnl, its ISA capped at avx512_core_bf16) over the weights in
//   place (a plain [K, N] view of the mapped rows, no reordered copy), sums in
//   f32. oneDNN rather than hand-written vdpbf16ps register tiles, which
//   oneDNN's brgemm outruns (docs/performance.md).
// Fast: |fast - exact| <= 2^-8 * sum_k |w_k x_k| per result for K <= 16384
// columns. Rounding x_k to bf16 (8 significant bits, nearest even) moves each
// term by at most 2^-9 of itself; a bf16 x bf16 product is exact in f32; each
// policy's f32 summation of K terms errs by at most K * 2^-24 * sum |w_k x_k|
// (both together <= 2^-9 of it for K <= 16384); vdpbf16ps and tdpbf16ps
// flush subnormals, which moves a result by less than K * 2^-126 besides.
//
// Levels: these kernels need AVX-512 F/BW/VL only (plus AVX512-BF16 for the
// fast path), or AVX2/FMA/F16C at the avx2 level, not the VNNI the int8
// kernels want, so they pick their own level (half_decode_path) rather than
// following best_kernel_set().
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "llama/kernels/dispatch/half_path.hpp"
#include "llama/kernels/products/bf16_batch.hpp"
#include "llama/kernels/products/gguf_products.hpp"
#include "llama/kernels/products/llama2c_int8.hpp"
#include "llama/numerics.hpp"
#include "llama/tensor.hpp"

namespace llama {

// Decode: out[r - row_begin] = row r of W . x for rows [row_begin, row_end).
// `path` avx512: 4 rows at a time sharing each load of x, the rows' bytes
// prefetched into L2 in address order 16 KiB ahead (AVX-512 F/BW/VL), each result
// that of a one-row call bit for bit (and blocks_matvec_rows_f32's with
// KernelSet::avx512_vnni); avx2: the same bits with AVX2/FMA/F16C (4 bf16 or
// 3 f16 rows at a time); portable:
// blocks_matvec_rows_f32's portable loop. Throws Error for another path or one this CPU lacks.
void half_matvec_rows(std::span<float> out, const BlockMatrix& w, std::span<const float> x,
                      int64_t row_begin, int64_t row_end, HalfPath path);

// out[t * out_stride + r] = row r of W . x_t for rows [row_begin, row_end)
// and the n vectors x_t = x[t * ld, t * ld + cols) (f32), W bf16 or f16
// [rows, cols]; results independent of the row range. Throws Error for a
// path this CPU lacks or fast on f16.
void half_matmat_rows(std::span<float> out, int64_t out_stride, const BlockMatrix& w,
                      std::span<const float> x, int64_t ld, int64_t n, int64_t row_begin,
                      int64_t row_end, HalfPath path);

}  // namespace llama
