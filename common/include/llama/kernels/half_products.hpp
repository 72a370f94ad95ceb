// Products with bf16 and f16 weights read in place: the rows of the core's
// product table for DType::bf16 / f16 (kernels/products.hpp). Every exact
// path computes on the exactly upcast weights in f32. Decode keeps the block
// kernels' definition (kernels/block_products.hpp blocks_matvec_rows_f32:
// upcast in registers, 16 f32 lanes, a pairwise sum), 4 rows at a time
// (half_matvec_rows); an exact batch on AVX-512 is the f32 model's batch
// product instead (the core's GEMM, kernels/gemm_f32.hpp: one FMA chain per
// result), so its results equal decode's to f32 rounding, not bit for bit.
//
// Paths, by numerics policy (llama/numerics.hpp) and CPU:
// - exact, portable: blocks_matvec_rows_f32(Q8Kernel::portable) per vector,
//   64-row tiles so each tile comes from memory once per batch (decode's bits).
// - exact, avx512 (AVX-512 F/BW/VL): gemm_f32_rows(SimdLevel::avx512) with
//   the weights widened exactly as it packs them. Register tiles that kept
//   decode's bits ran 0.73x blas's sgemm prefill on an Intel Xeon (their
//   horizontal sums compete with the FMAs for ports 0 and 5); this runs
//   1.08-1.18x (docs/performance.md).
// - exact, avx2 (the avx2 level: AVX2, FMA, F16C): decode as avx512's bit
//   for bit (its 16 lanes as two ymm), batches gemm_f32_rows(SimdLevel::avx2)
//   (the same bits as avx512's GEMM). Every caller's kernel is
//   Q8Kernel::portable at that level, so the reference backend runs it too.
// - exact, amx-bf16x3 (bf16 weights, a CPU with AMX-BF16 tiles the OS lets
//   this process use): each f32 activation split exactly into three bf16
//   planes (x = p0 + p1 + p2, 8 significant bits each: Bf16Layout::tiles_x3),
//   the products w * p exact in the tiles' f32 sums, plane 0's sum and planes
//   1 and 2's kept apart and added once, so a result errs from the exact sum
//   by about what the f32 GEMM's does (plane 0's chain of K roundings; the
//   others' are 2^-8 smaller), the terms being exact. Three times amx-bf16's
//   tile products, still about twice the f32 GEMM's speed on an Intel Xeon
//   with AMX. Inputs below 2^-110 or so lose their lowest plane (the tiles and
//   the conversion flush subnormals), as do subnormal weights.
// - fast, amx-bf16 (bf16 weights, a CPU with AMX-BF16 tiles the OS lets this
//   process use): activations rounded to bf16 once per batch into the tile
//   layout (Bf16Layout::tiles), the weights read in place through a panel of
//   32 rows copied into tile order, tdpbf16ps sums in f32. Hand-written:
//   1.2-1.55x oneDNN 2.6's AMX matmul on its own reordered weights, 1.3-1.6x
//   on the weights in place, for the 340M shape's products on one core of an
//   Intel Xeon with AMX (docs/performance.md).
// - fast, onednn-bf16 (bf16 weights, AVX512-BF16 without AMX): activations
//   rounded to bf16 (nearest even) once per call, or once per batch by the
//   backend (Bf16BatchView below, Bf16Layout::rows), then oneDNN's matmul
//   (Debian's libdnnl, its ISA capped at avx512_core_bf16) over the weights in
//   place (a plain [K, N] view of the mapped rows, no reordered copy), sums in
//   f32. Chosen by measurement: 400-470 GFLOP/s on one Zen 5 core for the 340M
//   shape's products against 221-240 for the hand-written vdpbf16ps register
//   tiles this replaced (docs/performance.md).
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
// following best_q8_kernel().
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "llama/kernels/block_products.hpp"
#include "llama/kernels/q8.hpp"
#include "llama/numerics.hpp"
#include "llama/tensor.hpp"

namespace llama {

enum class HalfPath { portable, avx2, avx512, onednn_bf16, amx_bf16, amx_bf16x3 };
inline constexpr HalfPath kHalfPaths[] = {HalfPath::portable, HalfPath::avx2,
                                          HalfPath::avx512,   HalfPath::onednn_bf16,
                                          HalfPath::amx_bf16, HalfPath::amx_bf16x3};
// "portable", "avx2-f32", "avx512-f32", "onednn-bf16", "amx-bf16", "amx-bf16x3".
const char* to_string(HalfPath path);
// Whether the path rounds activations to bf16 (the fast policy's paths).
bool half_path_is_fast(HalfPath path);
// Whether the path reads its batch as bf16 (a Bf16BatchView: the fast paths,
// and amx-bf16x3's three exact planes).
bool half_path_reads_bf16(HalfPath path);
// Whether this CPU (and build) runs `path`.
bool half_path_available(HalfPath path);
// What the path needs of the CPU: "", "AVX-512 F/BW/VL", "AVX512-BF16", ...
const char* half_path_requirement(HalfPath path);

// Decode's path (portable, avx2 or avx512) for a backend whose other products run
// `kernel`. Q8Kernel::portable asked for on a CPU that runs the VNNI kernels
// (the reference backend's plain loops, LLAMA_Q8_KERNEL=portable) keeps the
// plain loops; elsewhere the best level simd_level() allows: an AVX-512 CPU
// without VNNI, whose best_q8_kernel() is portable, still gets avx512, and
// the avx2 level (no int8 kernels: every caller's is portable) avx2.
HalfPath half_decode_path(Q8Kernel kernel);
// The batch path for `kind` (BlockKind::bf16 or f16) under `numerics` where
// decode runs half_decode_path(kernel).
HalfPath half_batch_path(BlockKind kind, Q8Kernel kernel, Numerics numerics);
// Why half_batch_path chose what it did, for --explain: "onednn-bf16 (oneDNN
// 2.6.3, ISA avx512_core_bf16; fast numerics; ...)", "avx512-f32 (exact
// numerics)", ...
std::string explain_half_batch_path(BlockKind kind, Q8Kernel kernel, Numerics numerics);
// Whether a batch product with `w` reads its input as bf16 (bf16 weights,
// half_batch_path onednn-bf16, amx-bf16 or amx-bf16x3), which a backend
// rounds once (round_batch_to_bf16, Bf16BatchView below) for every product
// reading it, in the layout bf16_batch_layout gives. The one test the backends
// share: blas's BatchInputCache::bf16, graph's Op::round_bf16.
bool batch_rounds_to_bf16(const Tensor& w, Q8Kernel kernel, Numerics numerics);
// The same for decode: "avx512-f32 (...)" or "portable (...)".
std::string explain_half_decode_path(Q8Kernel kernel);

// Decode: out[r - row_begin] = row r of W . x for rows [row_begin, row_end).
// `path` avx512: 4 rows at a time sharing each load of x, the rows' bytes
// prefetched into L2 in address order 16 KiB ahead (AVX-512 F/BW/VL), each result
// blocks_matvec_rows_f32's (Q8Kernel::avx512_vnni) bit for bit; avx2: the
// same bits with AVX2/FMA/F16C (4 bf16 or 3 f16 rows at a time); portable:
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

// The fast paths' batch input rounded once. They read their vectors as bf16;
// rounding them on every call cost each row block of every product a pass
// over the whole batch (8 passes a product at 4 blocks per thread). A backend
// rounds the batch once (round_batch_to_bf16, its tokens split over threads
// if it likes) and hands the rounded vectors to every row block, and to
// every product reading the same vectors (wq, wk, wv; w1, w3).
enum class Bf16Layout {
  // onednn-bf16: bf16 [n, ld], zero past the columns.
  rows,
  // amx-bf16: AMX B tiles, blocks of 16 tokens: bf16 [ceil(n / 16)][ld / 32]
  // [16 column pairs][16 tokens][2], zero past the columns; room for n
  // rounded up to 32 tokens (the kernel takes blocks in pairs), the tokens
  // past n never written nor their results stored.
  tiles,
  // amx-bf16x3: three such planes, each a third of the span, the values
  // split exactly: plane 0 rounded to bf16, plane 1 what plane 0 left
  // (rounded), plane 2 what both left.
  tiles_x3,
};
const char* to_string(Bf16Layout layout);  // "rows", "tiles", "tiles_x3"
struct Bf16BatchView {
  std::span<const uint16_t> values;  // bf16, bf16_batch_values(n, cols, layout) of them
  int64_t ld = 0;                    // bf16_batch_ld(cols)
  int64_t n = 0;
  Bf16Layout layout = Bf16Layout::rows;
};
// The layout a path reads: tiles for amx-bf16, tiles_x3 for amx-bf16x3, rows
// otherwise.
Bf16Layout bf16_layout(HalfPath path);
// The layout bf16 weights' batch products read under (kernel, numerics)
// where batch_rounds_to_bf16 holds.
Bf16Layout bf16_batch_layout(Q8Kernel kernel, Numerics numerics);
// The row stride of a rounded batch: cols padded to a multiple of 32.
int64_t bf16_batch_ld(int64_t cols);
// bf16 values a rounded batch of n vectors of cols values takes in `layout`.
// Throws Error for negative sizes or an overflow.
int64_t bf16_batch_values(int64_t n, int64_t cols, Bf16Layout layout);
// Vectors [t_begin, t_end) of x (f32, ld apart, cols each) rounded to bf16
// (nearest even, as the fast paths round; split into three planes for
// tiles_x3) into their place in out, a batch in
// `layout` with room for t_end vectors (bf16_batch_values(t_end, cols,
// layout)). Ranges may be rounded separately (by several threads; in the
// tile layout each range should start at a multiple of 16 to be written 16
// tokens at a time). Needs AVX512-BF16; throws Error without it or for
// buffers smaller than the rows.
void round_batch_to_bf16(std::span<const float> x, int64_t ld, int64_t cols, int64_t t_begin,
                         int64_t t_end, std::span<uint16_t> out,
                         Bf16Layout layout = Bf16Layout::rows);
// half_matmat_rows(..., the layout's path) on vectors already rounded: the
// same results bit for bit, W bf16 [rows, cols] and x.ld ==
// bf16_batch_ld(cols). Throws Error for f16 weights, a CPU without the
// layout's path, or a view smaller than the batch.
void half_matmat_rows(std::span<float> out, int64_t out_stride, const BlockMatrix& w,
                      const Bf16BatchView& x, int64_t row_begin, int64_t row_end);

}  // namespace llama
