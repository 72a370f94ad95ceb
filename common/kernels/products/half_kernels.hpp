// Private to the core: the SIMD kernels behind half_products.hpp (decode's
// rows, the fast paths' rounding and products, oneDNN's ISA); the caller
// checks the CPU and the sizes first.
#pragma once

#include <cstdint>
#include <string>

#include "llama/kernels/products/gguf_products.hpp"

namespace llama::detail {

// Decode, AVX-512 F/BW/VL: out[r - row_begin] for rows [row_begin, row_end),
// 4 rows at a time, prefetched into L2 in address order 16 KiB ahead; per row
// 16 f32 lanes of FMAs in column order and the pairwise horizontal sum, so
// each row has the bits of a one-row call. Also blocks_matvec_rows_f32's
// bf16/f16 rows with KernelSet::avx512_vnni.
void half_matvec_rows_avx512(float* out, const BlockMatrix& w, const float* x, int64_t row_begin,
                             int64_t row_end);

// Decode, AVX2/FMA/F16C: the same results bit for bit (the avx512 kernels'
// 16 lanes as two ymm), 4 bf16 or 3 f16 rows at a time, the same prefetch.
void half_matvec_rows_avx2(float* out, const BlockMatrix& w, const float* x, int64_t row_begin,
                           int64_t row_end);

// x (f32 [n]) rounded to bf16 (nearest even) into out (bf16 [padded], the
// values past n zero), padded a multiple of 32; needs AVX512-BF16.
void round_to_bf16(const float* x, int64_t n, uint16_t* out, int64_t padded);

// Tokens [t_begin, t_end) of x (f32 rows ld apart, cols values each)
// rounded to bf16 (nearest even) into the tile layout (Bf16Layout::tiles):
// out bf16 [blocks of 16 tokens][kbs][16 pairs][16 tokens][2], kbs =
// ceil(cols / 32), zero past cols. With planes 3 (Bf16Layout::tiles_x3),
// plane_values apart, plane 1 holds what plane 0 left of each value rounded
// to bf16 and plane 2 what planes 0 and 1 left, so the planes sum to the
// values. A block wholly in the range is written whole (16 tokens
// transposed); tokens of a block the range only partly covers are scattered
// into their columns, leaving the rest as it was (another range's, or past
// the batch). Needs AVX512-BF16.
void round_to_bf16_tiles(const float* x, int64_t ld, int64_t cols, int64_t t_begin, int64_t t_end,
                         uint16_t* out, int64_t kbs, int planes, int64_t plane_values);

// amx-bf16 (planes 1) and amx-bf16x3 (planes 3): out[t * out_stride + r] =
// row r of W (bf16 [rows, cols], read in place) . token t of x (in the tile
// layout, ld = bf16_batch_ld(cols), each plane plane_values apart with room
// for the batch rounded up to 32 tokens) for rows [row_begin, row_end) and
// tokens [0, n). Three planes are summed in two sets of tiles, plane 0's and
// the others', added once at the end. Needs AMX-BF16 (permitted) and AVX-512
// F/BW/VL.
void matmat_rows_amx_bf16(float* out, int64_t out_stride, const BlockMatrix& w, const uint16_t* x,
                          int64_t ld, int64_t n, int planes, int64_t plane_values,
                          int64_t row_begin, int64_t row_end);

// onednn-bf16: the same product from x bf16 [n, xld] (Bf16Layout::rows) on
// oneDNN's matmul, on the calling thread alone.
void matmat_rows_onednn_bf16(float* out, int64_t out_stride, const BlockMatrix& w,
                             const uint16_t* x, int64_t xld, int64_t n, int64_t row_begin,
                             int64_t row_end);

// Whether oneDNN's effective ISA has bf16 dot products (avx512_core_bf16 or
// AMX; DNNL_MAX_CPU_ISA may lower it).
bool onednn_bf16_isa();
// "oneDNN 2.6.3, ISA avx512_core_bf16": the library and the ISA it runs.
std::string onednn_description();

}  // namespace llama::detail
