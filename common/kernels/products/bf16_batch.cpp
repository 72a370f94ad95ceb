// The fast paths' rounded batch (kernels/products/half_products.hpp Bf16BatchView):
// its layouts and sizes, the rounding into each layout, and the product on
// a rounded batch, which goes to the layout's path: onednn-bf16 for rows
// (half_products_onednn.cpp), amx-bf16 for tiles and amx-bf16x3 for
// tiles_x3 (half_products_amx.cpp).
#include <limits>
#include <string>

#include "kernels/products/half_kernels.hpp"
#include "llama/checked_math.hpp"
#include "llama/error.hpp"
#include "llama/kernels/products/half_products.hpp"

namespace llama {
namespace {

int planes_of(Bf16Layout layout) { return layout == Bf16Layout::tiles_x3 ? 3 : 1; }

// Tokens a tile-layout batch holds room for: n rounded up to whole pairs of 16-token blocks.
int64_t tile_tokens(int64_t n) { return checked_add(n, int64_t{31}, "a bf16 batch") / 32 * 32; }

}  // namespace

int64_t bf16_batch_ld(int64_t cols) {
  if (cols < 0 || cols > std::numeric_limits<int64_t>::max() - 31) {
    throw Error("bf16_batch_ld: " + std::to_string(cols) + " columns");
  }
  return (cols + 31) / 32 * 32;
}

int64_t bf16_batch_values(int64_t n, int64_t cols, Bf16Layout layout) {
  if (n < 0) throw Error("a bf16 batch of " + std::to_string(n) + " vectors");
  const int64_t tokens = layout == Bf16Layout::rows ? n : tile_tokens(n);
  return checked_mul(checked_mul(tokens, bf16_batch_ld(cols), "a bf16 batch"),
                     int64_t{planes_of(layout)}, "a bf16 batch");
}

void round_batch_to_bf16(std::span<const float> x, int64_t ld, int64_t cols, int64_t t_begin,
                         int64_t t_end, std::span<uint16_t> out, Bf16Layout layout) {
  // The rounding needs AVX512-BF16, which both paths' CPUs have.
  if (!half_path_available(HalfPath::onednn_bf16)) {
    throw Error(std::string("round_batch_to_bf16: this CPU lacks ") +
                half_path_requirement(HalfPath::onednn_bf16));
  }
  if (t_end <= t_begin) return;
  const int64_t padded = bf16_batch_ld(cols);
  if (t_begin < 0 || ld < cols ||
      static_cast<uint64_t>(x.size()) < static_cast<uint64_t>(t_end - 1) * ld + cols ||
      static_cast<uint64_t>(out.size()) <
          static_cast<uint64_t>(bf16_batch_values(t_end, cols, layout))) {
    throw Error("round_batch_to_bf16: buffers smaller than the rows");
  }
  if (layout != Bf16Layout::rows) {
    // Each plane holds room for the batch up to t_end (checked above).
    const int planes = planes_of(layout);
    detail::round_to_bf16_tiles(x.data(), ld, cols, t_begin, t_end, out.data(), padded / 32, planes,
                                static_cast<int64_t>(out.size()) / planes);
    return;
  }
  for (int64_t t = t_begin; t < t_end; ++t) {
    detail::round_to_bf16(x.data() + t * ld, cols, out.data() + t * padded, padded);
  }
}

void half_matmat_rows(std::span<float> out, int64_t out_stride, const BlockMatrix& w,
                      const Bf16BatchView& x, int64_t row_begin, int64_t row_end) {
  const HalfPath path = half_path_of(x.layout);
  if (w.kind != BlockKind::bf16) {
    throw Error(std::string("half_matmat_rows: the ") + to_string(path) +
                " path takes bf16 weights, not " + to_string(w.kind));
  }
  if (!half_path_available(path)) {
    throw Error(std::string("half_matmat_rows: this CPU lacks ") + half_path_requirement(path) +
                " for the " + to_string(path) + " path");
  }
  if (row_end <= row_begin || x.n <= 0) return;
  if (row_begin < 0 || row_end > w.rows || x.ld != bf16_batch_ld(w.cols) ||
      static_cast<uint64_t>(x.values.size()) <
          static_cast<uint64_t>(bf16_batch_values(x.n, w.cols, x.layout)) ||
      static_cast<int64_t>(out.size()) < (x.n - 1) * out_stride + row_end) {
    throw Error("half_matmat_rows: a rounded batch or output smaller than the product");
  }
  if (x.layout != Bf16Layout::rows) {
    const int planes = planes_of(x.layout);
    detail::matmat_rows_amx_bf16(out.data(), out_stride, w, x.values.data(), x.ld, x.n, planes,
                                 static_cast<int64_t>(x.values.size()) / planes, row_begin,
                                 row_end);
  } else {
    detail::matmat_rows_onednn_bf16(out.data(), out_stride, w, x.values.data(), x.ld, x.n,
                                    row_begin, row_end);
  }
}

}  // namespace llama
