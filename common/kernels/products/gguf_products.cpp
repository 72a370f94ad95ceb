// Products with GGUF block weights: the portable kernels (the definitions the
// SIMD ones reproduce), activation quantization as llama.cpp does it on x86,
// the Q8_0 batch (and Q4_0's at the avx2 sets and on AMX-INT8 tiles) through the int8 batch
// kernel, and tile dequantization.
#include "llama/kernels/products/gguf_products.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "kernels/products/block_input_sizes.hpp"
#include "kernels/products/gguf_kernels.hpp"
#include "kernels/products/half_kernels.hpp"
#include "kernels/products/llama2c_int8_kernels.hpp"
#include "llama/error.hpp"
#include "llama/kernels/numbers/gguf_blocks.hpp"
#include "llama/kernels/numbers/half.hpp"
#include "llama/kernels/numbers/legacy_blocks.hpp"
#include "llama/kernels/numbers/low_kquant_blocks.hpp"
#include "llama/kernels/x86/simd_target.hpp"

namespace llama {

const char* to_string(BlockKind kind) {
  switch (kind) {
    case BlockKind::f16:
      return "F16";
    case BlockKind::bf16:
      return "BF16";
    case BlockKind::q8_0:
      return "Q8_0";
    case BlockKind::q4_0:
      return "Q4_0";
    case BlockKind::q4_k:
      return "Q4_K";
    case BlockKind::q4_1:
      return "Q4_1";
    case BlockKind::q5_0:
      return "Q5_0";
    case BlockKind::q5_1:
      return "Q5_1";
    case BlockKind::q5_k:
      return "Q5_K";
    case BlockKind::q3_k:
      return "Q3_K";
    case BlockKind::q2_k:
      return "Q2_K";
    default:
      return "Q6_K";
  }
}

int64_t block_values(BlockKind kind) {
  switch (kind) {
    case BlockKind::f16:
    case BlockKind::bf16:
      return 1;
    case BlockKind::q8_0:
    case BlockKind::q4_0:
    case BlockKind::q4_1:
    case BlockKind::q5_0:
    case BlockKind::q5_1:
      return kQK;
    default:
      return kQK_K;
  }
}

int64_t block_bytes(BlockKind kind) {
  switch (kind) {
    case BlockKind::f16:
    case BlockKind::bf16:
      return 2;
    case BlockKind::q8_0:
      return sizeof(BlockQ8_0);
    case BlockKind::q4_0:
      return sizeof(BlockQ4_0);
    case BlockKind::q4_k:
      return sizeof(BlockQ4_K);
    case BlockKind::q4_1:
      return sizeof(BlockQ4_1);
    case BlockKind::q5_0:
      return sizeof(BlockQ5_0);
    case BlockKind::q5_1:
      return sizeof(BlockQ5_1);
    case BlockKind::q5_k:
      return sizeof(BlockQ5_K);
    case BlockKind::q3_k:
      return sizeof(BlockQ3_K);
    case BlockKind::q2_k:
      return sizeof(BlockQ2_K);
    default:
      return sizeof(BlockQ6_K);
  }
}

std::optional<BlockKind> block_kind(DType dtype) {
  switch (dtype) {
    case DType::f16:
      return BlockKind::f16;
    case DType::bf16:
      return BlockKind::bf16;
    case DType::block_q8_0:
      return BlockKind::q8_0;
    case DType::q4_0:
      return BlockKind::q4_0;
    case DType::q4_k:
      return BlockKind::q4_k;
    case DType::q6_k:
      return BlockKind::q6_k;
    case DType::q4_1:
      return BlockKind::q4_1;
    case DType::q5_0:
      return BlockKind::q5_0;
    case DType::q5_1:
      return BlockKind::q5_1;
    case DType::q5_k:
      return BlockKind::q5_k;
    case DType::q3_k:
      return BlockKind::q3_k;
    case DType::q2_k:
      return BlockKind::q2_k;
    case DType::f32:
    case DType::q8_0:
      break;
  }
  return std::nullopt;
}

BlockMatrix block_matrix(const Tensor& t) {
  const std::optional<BlockKind> kind = block_kind(t.dtype);
  if (!kind) throw Error("tensor " + t.name + ": " + to_string(t.dtype) + " is not a block type");
  BlockMatrix w{.bytes = t.data, .rows = t.rows(), .cols = t.cols(), .kind = *kind};
  check_block_matrix(w, "tensor " + t.name);
  return w;
}

void check_block_matrix(const BlockMatrix& w, const std::string& what) {
  const int64_t bv = block_values(w.kind);
  if (w.rows < 0 || w.cols <= 0 || w.cols % bv != 0) {
    throw Error(what + ": " + to_string(w.kind) + " matrix of " + std::to_string(w.rows) + " x " +
                std::to_string(w.cols) + " does not hold whole blocks of " + std::to_string(bv));
  }
  __int128 need = static_cast<__int128>(w.rows) * w.row_bytes();
  if (need != static_cast<__int128>(w.bytes.size())) {
    throw Error(what + ": " + to_string(w.kind) + " matrix of " + std::to_string(w.rows) + " x " +
                std::to_string(w.cols) + " needs " + std::to_string(static_cast<int64_t>(need)) +
                " bytes, has " + std::to_string(w.bytes.size()));
  }
  if (reinterpret_cast<uintptr_t>(w.bytes.data()) % 2 != 0) {
    throw Error(what + ": " + to_string(w.kind) + " blocks are not 2-byte aligned");
  }
}

namespace {

template <typename Block>
std::span<const Block> blocks_of(const std::byte* p, int64_t n) {
  return {reinterpret_cast<const Block*>(p), static_cast<size_t>(n)};
}

// Values [0, n) of a row (n a multiple of the block size) into out.
void dequantize_row(BlockKind kind, const std::byte* row, int64_t n, float* out) {
  const std::span<float> o(out, static_cast<size_t>(n));
  const int64_t nb = n / block_values(kind);
  switch (kind) {
    case BlockKind::f16:
      f16_to_f32(blocks_of<uint16_t>(row, nb), o);
      break;
    case BlockKind::bf16:
      bf16_to_f32(blocks_of<uint16_t>(row, nb), o);
      break;
    case BlockKind::q8_0:
      dequantize_q8_0(blocks_of<BlockQ8_0>(row, nb), o);
      break;
    case BlockKind::q4_0:
      dequantize_q4_0(blocks_of<BlockQ4_0>(row, nb), o);
      break;
    case BlockKind::q4_k:
      dequantize_q4_k(blocks_of<BlockQ4_K>(row, nb), o);
      break;
    case BlockKind::q6_k:
      dequantize_q6_k(blocks_of<BlockQ6_K>(row, nb), o);
      break;
    case BlockKind::q4_1:
      dequantize_q4_1(blocks_of<BlockQ4_1>(row, nb), o);
      break;
    case BlockKind::q5_0:
      dequantize_q5_0(blocks_of<BlockQ5_0>(row, nb), o);
      break;
    case BlockKind::q5_1:
      dequantize_q5_1(blocks_of<BlockQ5_1>(row, nb), o);
      break;
    case BlockKind::q5_k:
      dequantize_q5_k(blocks_of<BlockQ5_K>(row, nb), o);
      break;
    case BlockKind::q3_k:
      dequantize_q3_k(blocks_of<BlockQ3_K>(row, nb), o);
      break;
    case BlockKind::q2_k:
      dequantize_q2_k(blocks_of<BlockQ2_K>(row, nb), o);
      break;
  }
}

// ggml's x86 rounding: vroundps to nearest (even), vcvtps2dq and the
// saturating packs; NaN (which the packs would make -128) becomes 0.
int8_t round_to_int8(float v) {
  if (!(v == v)) return 0;
  return static_cast<int8_t>(std::clamp(std::nearbyint(v), -128.0f, 127.0f));
}

// Block b of a Q8_0 or Q4_0 row as int8 values (i8 [32]: Q4_0's codes - 8)
// and its f32 scale.
float block_values_of(BlockKind kind, const std::byte* row, int64_t b, int8_t* values) {
  if (kind == BlockKind::q4_0) {
    BlockQ4_0 blk;
    std::memcpy(&blk, row + b * sizeof(BlockQ4_0), sizeof blk);
    for (int j = 0; j < kQK / 2; ++j) {
      values[j] = static_cast<int8_t>((blk.qs[j] & 0x0F) - 8);
      values[j + kQK / 2] = static_cast<int8_t>((blk.qs[j] >> 4) - 8);
    }
    return f16_to_f32(blk.d);
  }
  BlockQ8_0 blk;
  std::memcpy(&blk, row + b * sizeof(BlockQ8_0), sizeof blk);
  std::memcpy(values, blk.qs, kQK);
  return f16_to_f32(blk.d);
}

// q8_0_blocks_matvec_rows' definition: per block the int32 dot, then for
// Q8_0 val = fma(float(dot) * w_scale, x_scale, val); for Q4_0 val =
// fma(float(dot), w_scale * x_scale, val), llama.cpp's order for Q4_0 on x86
// (its rows repacked eight at a time: ggml_gemv_q4_0_8x8_q8_0 and
// ggml_gemm_q4_0_8x8_q8_0, decode and prefill alike).
float q8_input_row_dot_portable(BlockKind kind, const std::byte* row, const Q8View& x,
                                int64_t blocks) {
  float val = 0.0f;
  int8_t w[kQK];
  for (int64_t b = 0; b < blocks; ++b) {
    const float d = block_values_of(kind, row, b, w);
    const int8_t* xv = x.values.data() + b * kQK;
    int32_t dot = 0;
    for (int j = 0; j < kQK; ++j) dot += int32_t{w[j]} * int32_t{xv[j]};
    const float xs = x.scales[static_cast<size_t>(b)];
    val = kind == BlockKind::q4_0 ? std::fma(static_cast<float>(dot), d * xs, val)
                                  : std::fma(static_cast<float>(dot) * d, xs, val);
  }
  return val;
}

void require_q8_input_kind(const BlockMatrix& w) {
  if (w.kind != BlockKind::q8_0 && w.kind != BlockKind::q4_0) {
    throw Error(std::string("q8_0-block products: ") + to_string(w.kind) +
                " weights take f32 inputs");
  }
}

// Rows [row_begin, row_begin + n) of Q8_0 blocks into values (i8 [n, cols])
// and scales (f32 [n, cols / 32]).
void unpack_q8_0_rows(const BlockMatrix& w, int64_t row_begin, int64_t n, int8_t* values,
                      float* scales) {
  const int64_t blocks = w.cols / kQK;
  for (int64_t i = 0; i < n; ++i) {
    const std::byte* row = w.row(row_begin + i);
    for (int64_t b = 0; b < blocks; ++b) {
      BlockQ8_0 blk;
      std::memcpy(&blk, row + b * sizeof(BlockQ8_0), sizeof blk);
      std::memcpy(values + i * w.cols + b * kQK, blk.qs, kQK);
      scales[i * blocks + b] = f16_to_f32(blk.d);
    }
  }
}

// The AVX-512 kernels run where the caller asked for them (KernelSet::avx512_vnni,
// which best_kernel_set() gives only when the CPU has them and LLAMA_CPU_LEVEL
// allows avx512).
bool avx512_kernels(KernelSet kernel) {
  if (kernel != KernelSet::avx512_vnni) return false;
  require_kernel_set(kernel, "block kernels");
  return true;
}

// The same for KernelSet::avx2 and avx_vnni (their bodies; the portable loops
// elsewhere).
bool avx2_kernels(KernelSet kernel) {
  if (!runs_avx2_bodies(kernel)) return false;
  require_kernel_set(kernel, "block kernels");
  return true;
}

}  // namespace

void quantize_activations_q8_0_blocks(std::span<const float> x, Q8Vector& out) {
  out.resize(static_cast<int64_t>(x.size()), kQK);
  quantize_activations_q8_0_blocks(x, out.values, out.scales);
}

void quantize_activations_q8_0_blocks(std::span<const float> x, std::span<int8_t> values,
                                      std::span<float> scales) {
  quantize_activations_q8_0_blocks(x, values, scales, simd_level());
}

void quantize_activations_q8_0_blocks(std::span<const float> x, std::span<int8_t> values,
                                      std::span<float> scales, SimdLevel level) {
  detail::check_block_input_sizes("quantize_activations_q8_0_blocks", x.size(), values.size(),
                                  scales.size(), kQK, kQK);
#if LLAMA_HAVE_X86_TARGETS
  const auto blocks = static_cast<int64_t>(scales.size());
  switch (runnable_level(level)) {
    case SimdLevel::avx512:
      detail::quantize_q8_0_blocks_avx512(x.data(), blocks, values.data(), scales.data());
      return;
    case SimdLevel::avx2:
      detail::quantize_q8_0_blocks_avx2(x.data(), blocks, values.data(), scales.data());
      return;
    case SimdLevel::portable:
      break;
  }
#else
  (void)level;
#endif
  for (size_t b = 0; b < scales.size(); ++b) {
    const float* xb = x.data() + b * kQK;
    float amax = 0.0f;
    for (int j = 0; j < kQK; ++j) amax = std::max(amax, std::fabs(xb[j]));
    const uint16_t d = f32_to_f16(amax / 127.f);
    const float id = amax != 0.0f ? 127.f / amax : 0.0f;
    scales[b] = f16_to_f32(d);
    for (int j = 0; j < kQK; ++j) values[b * kQK + j] = round_to_int8(xb[j] * id);
  }
}

void q8_0_blocks_matvec_rows(std::span<float> out, const BlockMatrix& w, const Q8View& x,
                             int64_t row_begin, int64_t row_end, KernelSet kernel) {
  require_q8_input_kind(w);
  if (avx512_kernels(kernel)) {
    if (w.kind == BlockKind::q4_0) {
      detail::q4_0_matvec_rows_vnni(out, w, x, row_begin, row_end);
    } else {
      detail::q8_0_blocks_matvec_rows_vnni(out, w, x, row_begin, row_end);
    }
    return;
  }
#if LLAMA_HAVE_X86_TARGETS
  if (avx2_kernels(kernel)) {
    if (kernel == KernelSet::avx_vnni) {
      detail::q8_0_blocks_matvec_rows_avxvnni(out, w, x, row_begin, row_end);
    } else {
      detail::q8_0_blocks_matvec_rows_avx2(out, w, x, row_begin, row_end);
    }
    return;
  }
#endif
  const int64_t blocks = w.cols / kQK;
  for (int64_t r = row_begin; r < row_end; ++r) {
    out[static_cast<size_t>(r - row_begin)] =
        q8_input_row_dot_portable(w.kind, w.row(r), x, blocks);
  }
}

void q8_0_blocks_matmat_rows(std::span<float> out, int64_t out_stride, const BlockMatrix& w,
                             const Q8BatchView& x, int64_t row_begin, int64_t row_end,
                             KernelSet kernel) {
  require_q8_input_kind(w);
  const auto n_values = static_cast<int64_t>(x.values.size());
  if (n_values % w.cols != 0 ||
      static_cast<int64_t>(x.scales.size()) != n_values / w.cols * (w.cols / kQK)) {
    throw Error("q8_0-block batch of " + std::to_string(n_values) + " values and " +
                std::to_string(x.scales.size()) + " scales is not whole vectors of " +
                std::to_string(w.cols) + " values in blocks of 32");
  }
  const int64_t n_vectors = n_values / w.cols;
  // Q4_0 on the AMX-INT8 tiles: rows unpacked to i8 as below, through the tile
  // kernel in Q4_0's order; else at avx512 its own VNNI batch kernel.
  const bool q4_tiles = w.kind == BlockKind::q4_0 && n_vectors >= detail::kMinTileBatch &&
                        LLAMA_HAVE_X86_TARGETS && avx512_kernels(kernel) && amx_int8_enabled();
  if (w.kind == BlockKind::q4_0 && !q4_tiles && avx512_kernels(kernel)) {
    detail::q4_0_matmat_rows_vnni(out, out_stride, w, x, row_begin, row_end);
    return;
  }
  // Q4_0 at the avx2 sets: rows unpacked to i8 as Q8_0's are, through the int8
  // batch kernel combining in Q4_0's order (llama2c_int8_kernels.hpp), from as many
  // vectors as that kernel packs into lanes.
  constexpr int64_t kMinQ4Batch = 4;
  const bool q4_batch = w.kind == BlockKind::q4_0 && n_vectors >= kMinQ4Batch &&
                        LLAMA_HAVE_X86_TARGETS && (q4_tiles || avx2_kernels(kernel));
  if (w.kind == BlockKind::q4_0 && !q4_batch) {
    // The decode kernel per (row tile, vector): every result is
    // q8_0_blocks_matvec_rows' bit for bit, and a tile of 64 rows stays in
    // L1/L2 while the vectors pass over it.
    constexpr int64_t kTileRows = 64;
    const int64_t blocks = w.cols / kQK;
    const auto u = [](int64_t n) { return static_cast<size_t>(n); };
    for (int64_t r0 = row_begin; r0 < row_end; r0 += kTileRows) {
      const int64_t r1 = std::min(row_end, r0 + kTileRows);
      for (int64_t t = 0; t * w.cols < static_cast<int64_t>(x.values.size()); ++t) {
        const Q8View xt(x.values.subspan(u(t * w.cols), u(w.cols)),
                        x.scales.subspan(u(t * blocks), u(blocks)), kQK);
        q8_0_blocks_matvec_rows(out.subspan(u(t * out_stride + r0), u(r1 - r0)), w, xt, r0, r1,
                                kernel);
      }
    }
    return;
  }
  // Rows per tile: the int8 batch kernel packs the whole batch on every call,
  // so a tile amortizes that over 256 rows (i8 [256, cols] stays in L2).
  constexpr int64_t kTile = 256;
  const int64_t blocks = w.cols / kQK;
  const int64_t tile = std::min(kTile, std::max<int64_t>(row_end - row_begin, 0));
  // The tile's storage is kept per thread from call to call: a prefill makes
  // thousands of these calls (a few per matrix and thread), and allocating
  // i8 [256, cols] afresh each time would cost the kernel's page zeroing of
  // the freshly mapped memory every time, a large part of a prefill. It grows
  // to the largest tile the thread has run, lives as long as the thread and
  // holds no state between calls: every byte read is written by this call's
  // unpack first.
  thread_local std::vector<int8_t> values;  // i8 [tile, cols]
  thread_local std::vector<float> scales;   // f32 [tile, blocks]
  if (values.size() < static_cast<size_t>(tile * w.cols)) {
    values.resize(static_cast<size_t>(tile * w.cols));
  }
  if (scales.size() < static_cast<size_t>(tile * blocks)) {
    scales.resize(static_cast<size_t>(tile * blocks));
  }
  for (int64_t r0 = row_begin; r0 < row_end; r0 += tile) {
    const int64_t n = std::min(tile, row_end - r0);
    if (q4_batch) {
#if LLAMA_HAVE_X86_TARGETS
      detail::unpack_q4_0_rows_avx2(w, r0, n, values.data(), scales.data());
#endif
    } else if (avx512_kernels(kernel)) {
      detail::unpack_q8_0_rows_vnni(w, r0, n, values.data(), scales.data());
    } else {
      unpack_q8_0_rows(w, r0, n, values.data(), scales.data());
    }
    const QuantizedTensor tile{{values.data(), static_cast<size_t>(n * w.cols)},
                               {scales.data(), static_cast<size_t>(n * blocks)},
                               kQK};
    const std::span<float> tile_out = out.subspan(static_cast<size_t>(r0));
    if (!q4_batch) {
      q8_matmat_rows(tile_out, out_stride, tile, x, 0, n, kernel);
      continue;
    }
#if LLAMA_HAVE_X86_TARGETS
    detail::Q8Batch batch;
    batch.values = x.values.data();
    batch.scales = x.scales.data();
    batch.n = n_vectors;
    batch.cols = w.cols;
    batch.group_size = kQK;
    if (q4_tiles) {
      detail::q8_matmat_rows_q4_order_amx(tile_out, out_stride, tile, batch, 0, n);
    } else if (kernel == KernelSet::avx_vnni) {
      detail::q8_matmat_rows_q4_order_avxvnni(tile_out, out_stride, tile, batch, 0, n);
    } else {
      detail::q8_matmat_rows_q4_order_avx2(tile_out, out_stride, tile, batch, 0, n);
    }
#endif
  }
}

void blocks_matvec_rows_f32(std::span<float> out, const BlockMatrix& w, std::span<const float> x,
                            int64_t row_begin, int64_t row_end, KernelSet kernel) {
  if (w.kind != BlockKind::f16 && w.kind != BlockKind::bf16) {
    throw Error(std::string("f32-input block products: ") + to_string(w.kind) +
                " weights take quantized inputs");
  }
  if (avx512_kernels(kernel)) {
    // Decode's bf16/f16 kernel (half_products.hpp's avx512 path), 4 rows at
    // a time: every row the bits of a one-row call.
    detail::half_matvec_rows_avx512(out.data(), w, x.data(), row_begin, row_end);
    return;
  }
  // 256 values (512 bytes) at a time, widened into registers' worth of stack
  // and summed in 16 f32 lanes.
  constexpr int64_t kRun = 256;
  alignas(64) float tmp[kRun];
  for (int64_t r = row_begin; r < row_end; ++r) {
    const std::byte* row = w.row(r);
    float lanes[16] = {};
    int64_t k = 0;
    for (; k + kRun <= w.cols; k += kRun) {
      dequantize_row(w.kind, row + k * 2, kRun, tmp);
      for (int64_t j = 0; j < kRun; j += 16) {
        for (int l = 0; l < 16; ++l)
          lanes[l] = std::fma(tmp[j + l], x[static_cast<size_t>(k + j + l)], lanes[l]);
      }
    }
    float tail = 0.0f;  // fewer than 256 values left
    for (; k < w.cols; ++k) {
      float v;
      dequantize_row(w.kind, row + k * 2, 1, &v);
      tail = std::fma(v, x[static_cast<size_t>(k)], tail);
    }
    float s = 0.0f;
    for (float l : lanes) s += l;
    out[static_cast<size_t>(r - row_begin)] = s + tail;
  }
}

void dequantize_rows(const BlockMatrix& w, int64_t row_begin, int64_t row_end,
                     std::span<float> out) {
  for (int64_t r = row_begin; r < row_end; ++r) {
    dequantize_row(w.kind, w.row(r), w.cols, out.data() + (r - row_begin) * w.cols);
  }
}

}  // namespace llama
