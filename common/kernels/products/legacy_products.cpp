// Q5_0, Q4_1 and Q5_1 products in llama.cpp's x86 order
// (llama/kernels/products/legacy_products.hpp): the q8_1 activation
// quantization and the portable kernels, which are the definition.
#include "llama/kernels/products/legacy_products.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/products/block_input_sizes.hpp"
#include "kernels/products/legacy_kernels.hpp"
#include "llama/error.hpp"
#include "llama/kernels/numbers/half.hpp"
#include "llama/kernels/numbers/legacy_blocks.hpp"
#include "llama/kernels/x86/simd_target.hpp"

namespace llama {
namespace {

// Block b of a row: its 32 codes (u8 [32]), scale and min (0 for Q5_0).
struct Codes {
  uint8_t q[kQK];
  float d = 0.0f, m = 0.0f;
};

template <typename Block>
Block block_at(const std::byte* row, int64_t b) {
  Block blk;
  std::memcpy(&blk, row + b * static_cast<int64_t>(sizeof(Block)), sizeof blk);
  return blk;
}

Codes codes_of(BlockKind kind, const std::byte* row, int64_t b) {
  Codes c;
  switch (kind) {
    case BlockKind::q4_1: {
      const auto blk = block_at<BlockQ4_1>(row, b);
      block_codes(blk, c.q);
      c.d = f16_to_f32(blk.d);
      c.m = f16_to_f32(blk.m);
      break;
    }
    case BlockKind::q5_0: {
      const auto blk = block_at<BlockQ5_0>(row, b);
      block_codes(blk, c.q);
      c.d = f16_to_f32(blk.d);
      break;
    }
    default: {
      const auto blk = block_at<BlockQ5_1>(row, b);
      block_codes(blk, c.q);
      c.d = f16_to_f32(blk.d);
      c.m = f16_to_f32(blk.m);
      break;
    }
  }
  return c;
}

// One row against x (values i8 [cols], scales per block: Q5_0 d; Q4_1 and
// Q5_1 d, s): the header's eight lanes, hsum_float_8 and summs.
float row_dot(BlockKind kind, const std::byte* row, const Q8View& x, int64_t blocks) {
  const bool with_min = kind != BlockKind::q5_0;
  const int offset = kind == BlockKind::q5_0 ? 16 : 0;
  const int64_t per_block = with_min ? 2 : 1;
  float acc[8] = {};
  float summs = 0.0f;
  for (int64_t b = 0; b < blocks; ++b) {
    const Codes c = codes_of(kind, row, b);
    const int8_t* xv = x.values.data() + b * kQK;
    const float dx = x.scales[static_cast<size_t>(b * per_block)];
    const float d = c.d * dx;
    for (int l = 0; l < 8; ++l) {
      int32_t lane = 0;
      for (int j = 4 * l; j < 4 * l + 4; ++j) lane += (int32_t{c.q[j]} - offset) * xv[j];
      acc[l] = std::fma(static_cast<float>(lane), d, acc[l]);
    }
    if (with_min) summs += c.m * x.scales[static_cast<size_t>(b * per_block + 1)];
  }
  const float h0 = acc[0] + acc[4], h1 = acc[1] + acc[5], h2 = acc[2] + acc[6],
              h3 = acc[3] + acc[7];
  const float sum = (h0 + h2) + (h1 + h3);
  return with_min ? sum + summs : sum;
}

int64_t input_group(BlockKind kind) { return kind == BlockKind::q5_0 ? kQK : kQ8_1ScaleGroup; }

void require_legacy(const BlockMatrix& w, int64_t group_size) {
  if (!legacy_block_kind(w.kind)) {
    throw Error(std::string("legacy block products: ") + to_string(w.kind) +
                " weights are not Q5_0, Q4_1 or Q5_1");
  }
  if (group_size != input_group(w.kind)) {
    throw Error(std::string("legacy block products: ") + to_string(w.kind) + " weights take " +
                (w.kind == BlockKind::q5_0 ? "q8_0" : "q8_1") + "-block inputs, not groups of " +
                std::to_string(group_size));
  }
}

}  // namespace

void quantize_activations_q8_1_blocks(std::span<const float> x, std::span<int8_t> values,
                                      std::span<float> scales) {
  quantize_activations_q8_1_blocks(x, values, scales, simd_level());
}

void quantize_activations_q8_1_blocks(std::span<const float> x, std::span<int8_t> values,
                                      std::span<float> scales, SimdLevel level) {
  detail::check_block_input_sizes("quantize_activations_q8_1_blocks", x.size(), values.size(),
                                  scales.size(), kQ8_1ScaleGroup, kQK);
  const size_t blocks = x.size() / kQK;
#if LLAMA_HAVE_X86_TARGETS
  const auto n = static_cast<int64_t>(blocks);
  switch (runnable_level(level)) {
    case SimdLevel::avx512:
      detail::quantize_q8_1_blocks_avx512(x.data(), n, values.data(), scales.data());
      return;
    case SimdLevel::avx2:
      detail::quantize_q8_1_blocks_avx2(x.data(), n, values.data(), scales.data());
      return;
    case SimdLevel::portable:
      break;
  }
#endif
  for (size_t b = 0; b < blocks; ++b) {
    const std::span<const float> xb = x.subspan(b * kQK, kQK);
    const std::span<int8_t> vb = values.subspan(b * kQK, kQK);
    // The values and d are Q8_0's, at any level.
    quantize_activations_q8_0_blocks(xb, vb, scales.subspan(2 * b, 1), level);
    float amax = 0.0f;
    for (const float v : xb) amax = std::max(amax, std::fabs(v));
    int32_t sum = 0;
    for (const int8_t v : vb) sum += v;
    scales[2 * b + 1] = f16_to_f32(f32_to_f16(amax / 127.f * static_cast<float>(sum)));
  }
}

bool legacy_block_kind(BlockKind kind) {
  return kind == BlockKind::q5_0 || kind == BlockKind::q4_1 || kind == BlockKind::q5_1;
}

void legacy_blocks_matvec_rows(std::span<float> out, const BlockMatrix& w, const Q8View& x,
                               int64_t row_begin, int64_t row_end, KernelSet kernel) {
  require_legacy(w, x.group_size);
  if (kernel != KernelSet::portable) {
    require_kernel_set(kernel, "legacy block products");
    if (kernel == KernelSet::avx2) {
      detail::legacy_blocks_matvec_rows_avx2(out, w, x, row_begin, row_end);
    } else if (kernel == KernelSet::avx_vnni) {
      detail::legacy_blocks_matvec_rows_avxvnni(out, w, x, row_begin, row_end);
    } else {
      detail::legacy_blocks_matvec_rows_vnni(out, w, x, row_begin, row_end);
    }
    return;
  }
  const int64_t blocks = w.cols / kQK;
  for (int64_t r = row_begin; r < row_end; ++r) {
    out[static_cast<size_t>(r - row_begin)] = row_dot(w.kind, w.row(r), x, blocks);
  }
}

void legacy_blocks_matmat_rows(std::span<float> out, int64_t out_stride, const BlockMatrix& w,
                               const Q8BatchView& x, int64_t row_begin, int64_t row_end,
                               KernelSet kernel) {
  require_legacy(w, x.group_size);
  constexpr int64_t kTileRows = 64;  // a tile stays in L1/L2 while the vectors pass
  const int64_t groups = w.cols / x.group_size;
  const auto u = [](int64_t n) { return static_cast<size_t>(n); };
  const auto n = static_cast<int64_t>(x.values.size()) / w.cols;
  for (int64_t r0 = row_begin; r0 < row_end; r0 += kTileRows) {
    const int64_t r1 = std::min(row_end, r0 + kTileRows);
    for (int64_t t = 0; t < n; ++t) {
      const Q8View xt(x.values.subspan(u(t * w.cols), u(w.cols)),
                      x.scales.subspan(u(t * groups), u(groups)), x.group_size);
      legacy_blocks_matvec_rows(out.subspan(u(t * out_stride + r0), u(r1 - r0)), w, xt, r0, r1,
                                kernel);
    }
  }
}

}  // namespace llama
