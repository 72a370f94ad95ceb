// bf16/f16 products: path choice and the portable path (half_products.hpp);
// the SIMD paths are in half_products_avx512.cpp and half_products_avx2.cpp,
// the fast ones in half_products_amx.cpp and half_products_onednn.cpp behind
// their rounded batch (bf16_batch.cpp).
#include "llama/kernels/products/half_products.hpp"

#include <algorithm>

#include "kernels/products/half_kernels.hpp"
#include "llama/error.hpp"
#include "llama/kernels/dispatch/bf16_unit.hpp"
#include "llama/kernels/dispatch/cpu_features.hpp"
#include "llama/kernels/products/gemm_f32.hpp"
#include "llama/uninitialized_array.hpp"

namespace llama {

void half_matvec_rows(std::span<float> out, const BlockMatrix& w, std::span<const float> x,
                      int64_t row_begin, int64_t row_end, HalfPath path) {
  if (w.kind != BlockKind::bf16 && w.kind != BlockKind::f16) {
    throw Error(std::string("half_matvec_rows: ") + to_string(w.kind) + " weights");
  }
  if (path == HalfPath::portable) {
    blocks_matvec_rows_f32(out, w, x, row_begin, row_end, KernelSet::portable);
    return;
  }
  if ((path != HalfPath::avx512 && path != HalfPath::avx2) || !half_path_available(path)) {
    throw Error(std::string("half_matvec_rows: no ") + to_string(path) + " decode on this CPU");
  }
  if (row_end <= row_begin) return;
  if (static_cast<int64_t>(x.size()) < w.cols ||
      static_cast<int64_t>(out.size()) < row_end - row_begin) {
    throw Error("half_matvec_rows: buffers smaller than the product");
  }
  if (path == HalfPath::avx2) {
    detail::half_matvec_rows_avx2(out.data(), w, x.data(), row_begin, row_end);
  } else {
    detail::half_matvec_rows_avx512(out.data(), w, x.data(), row_begin, row_end);
  }
}

void half_matmat_rows(std::span<float> out, int64_t out_stride, const BlockMatrix& w,
                      std::span<const float> x, int64_t ld, int64_t n, int64_t row_begin,
                      int64_t row_end, HalfPath path) {
  if (w.kind != BlockKind::bf16 && w.kind != BlockKind::f16) {
    throw Error(std::string("half_matmat_rows: ") + to_string(w.kind) + " weights");
  }
  if (!half_path_available(path)) {
    throw Error(std::string("half_matmat_rows: this CPU lacks ") + half_path_requirement(path) +
                " for the " + to_string(path) + " path");
  }
  if (row_end <= row_begin || n <= 0) return;
  // The caller's spans must hold the last vector and the last result.
  if (static_cast<int64_t>(x.size()) < (n - 1) * ld + w.cols ||
      static_cast<int64_t>(out.size()) < (n - 1) * out_stride + row_end) {
    throw Error("half_matmat_rows: buffers smaller than the batch");
  }
  switch (path) {
    case HalfPath::avx512:
    case HalfPath::avx2:
      // The f32 model's batch product on the upcast weights: register tiles
      // that kept decode's bits need horizontal sums, which compete with the
      // FMAs for the same ports, so an exact batch gives up decode's bits for
      // the GEMM's speed (docs/performance.md has the figures per CPU).
      gemm_f32_rows(path == HalfPath::avx2 ? SimdLevel::avx2 : SimdLevel::avx512, out.data(),
                    out_stride, w.kind == BlockKind::bf16 ? GemmWeights::bf16 : GemmWeights::f16,
                    w.bytes.data(), x.data(), ld, w.cols, n, row_begin, row_end, nullptr, 0);
      return;
    case HalfPath::onednn_bf16:
    case HalfPath::amx_bf16:
    case HalfPath::amx_bf16x3: {
      if (w.kind != BlockKind::bf16) {
        throw Error(std::string("half_matmat_rows: the ") + to_string(path) +
                    " path takes bf16 weights, not F16");
      }
      // A caller without a rounded batch (tests, plugins): the vectors
      // rounded here for this call, then the one entry on a rounded batch.
      const Bf16Layout layout = bf16_layout(path);
      const auto count = static_cast<size_t>(bf16_batch_values(n, w.cols, layout));
      UninitializedArray<uint16_t> rounded(count);  // bf16 in `layout`
      const std::span<uint16_t> view(rounded.data(), count);
      round_batch_to_bf16(x, ld, w.cols, 0, n, view, layout);
      half_matmat_rows(out, out_stride, w, Bf16BatchView{view, bf16_batch_ld(w.cols), n, layout},
                       row_begin, row_end);
      return;
    }
    case HalfPath::portable:
      break;
  }
  // The decode kernel per (64-row tile, vector): each tile (128 KiB of bf16
  // at 1024 columns) stays in L2 while every vector passes over it.
  constexpr int64_t kTileRows = 64;
  const auto cols = static_cast<size_t>(w.cols);
  for (int64_t r0 = row_begin; r0 < row_end; r0 += kTileRows) {
    const int64_t r1 = std::min(row_end, r0 + kTileRows);
    for (int64_t t = 0; t < n; ++t) {
      blocks_matvec_rows_f32(
          out.subspan(static_cast<size_t>(t * out_stride + r0), static_cast<size_t>(r1 - r0)), w,
          x.subspan(static_cast<size_t>(t * ld), cols), r0, r1, KernelSet::portable);
    }
  }
}

}  // namespace llama
