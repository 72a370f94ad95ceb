// A batch of activations rounded to bf16 once (Bf16BatchView) for every fast
// product reading it, in the layout its path reads (dispatch/half_path.hpp).
#pragma once

#include <cstdint>
#include <span>

#include "llama/kernels/dispatch/half_path.hpp"
#include "llama/kernels/products/gguf_products.hpp"

namespace llama {

// The fast paths' batch input rounded once. They read their vectors as bf16;
// rounding them on every call cost each row block of every product a pass
// over the whole batch (8 passes a product at 4 blocks per thread). A backend
// rounds the batch once (round_batch_to_bf16, its tokens split over threads
// if it likes) and hands the rounded vectors to every row block, and to
// every product reading the same vectors (wq, wk, wv; w1, w3).
struct Bf16BatchView {
  std::span<const uint16_t> values;  // bf16, bf16_batch_values(n, cols, layout) of them
  int64_t ld = 0;                    // bf16_batch_ld(cols)
  int64_t n = 0;
  Bf16Layout layout = Bf16Layout::rows;
};
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
