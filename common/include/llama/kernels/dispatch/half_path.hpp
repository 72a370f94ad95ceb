// Which path a bf16/f16 product takes (HalfPath): decode's row kernels by
// SIMD level, the batch's exact f32 GEMM or amx-bf16x3, or under fast numerics
// the bf16 units (amx-bf16, onednn-bf16) as the bf16 unit probe allows; and the
// layout of the rounded batch each path reads. The kernels behind the paths
// are products/half_products.hpp and products/bf16_batch.hpp.
#pragma once

#include <string>

#include "llama/kernels/dispatch/kernel_set.hpp"
#include "llama/kernels/products/gguf_products.hpp"
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
// `kernel`. KernelSet::portable asked for on a CPU that runs the VNNI kernels
// (the reference backend's plain loops, LLAMA_Q8_KERNEL=portable) keeps the
// plain loops; elsewhere the best level simd_level() allows: an AVX-512 CPU
// without VNNI, whose best_kernel_set() is portable, still gets avx512, and
// the avx2 level (no int8 kernels: every caller's is portable) avx2.
HalfPath half_decode_path(KernelSet kernel);
// The batch path for `kind` (BlockKind::bf16 or f16) under `numerics` where
// decode runs half_decode_path(kernel).
HalfPath half_batch_path(BlockKind kind, KernelSet kernel, Numerics numerics);
// Why half_batch_path chose what it did, for --explain: "onednn-bf16 (oneDNN
// 2.6.3, ISA avx512_core_bf16; fast numerics; ...)", "avx512-f32 (exact
// numerics)", ...
std::string explain_half_batch_path(BlockKind kind, KernelSet kernel, Numerics numerics);
// Whether a batch product with `w` reads its input as bf16 (bf16 weights,
// half_batch_path onednn-bf16, amx-bf16 or amx-bf16x3), which a backend
// rounds once (round_batch_to_bf16, Bf16BatchView below) for every product
// reading it, in the layout bf16_batch_layout gives. The one test the backends
// share: blas's BatchInputCache::bf16, graph's Op::round_bf16.
bool batch_rounds_to_bf16(const Tensor& w, KernelSet kernel, Numerics numerics);
// The same for decode: "avx512-f32 (...)" or "portable (...)".
std::string explain_half_decode_path(KernelSet kernel);

// The layout of a batch rounded to bf16 (products/bf16_batch.hpp) for each path.
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
// The layout a path reads: tiles for amx-bf16, tiles_x3 for amx-bf16x3, rows
// otherwise.
Bf16Layout bf16_layout(HalfPath path);
// The path that reads `layout`: onednn-bf16 for rows, amx-bf16 for tiles, amx-bf16x3
// for tiles_x3.
HalfPath half_path_of(Bf16Layout layout);
// The layout bf16 weights' batch products read under (kernel, numerics)
// where batch_rounds_to_bf16 holds.
Bf16Layout bf16_batch_layout(KernelSet kernel, Numerics numerics);

}  // namespace llama
