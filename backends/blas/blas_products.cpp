// The BLAS backend's products: each matrix's rows are split across the
// backend's oneTBB arena; for f32 weights every block is one single-threaded
// OpenBLAS call, for other dtypes one call of the core's kernel.
//
// Why not OpenBLAS's own threads: they are woken for every call (about 45
// calls per token on the 15M shape) and spin between calls; on a machine with
// other work running, that collapsed decode with 2 threads to 11-22 tok/s
// against 100 with one (15M shape, llama-cli -j 2 vs -j 1, same run). Blocks
// start on 16-row boundaries so each row's dot product is summed the same
// way whatever the thread count.
#include <cblas.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>

#include <algorithm>

#include "blas_backend.hpp"

namespace llama::blas {
namespace {

// Below this many multiply-adds a product is not worth splitting.
constexpr int64_t kMinParallelWork = int64_t{1} << 16;
constexpr int64_t kRowGroup = 16;

}  // namespace

void BlasBackend::split_rows(int64_t rows, int64_t work,
                             const std::function<void(int64_t, int64_t)>& body) {
  if (threads_ == 1 || work < kMinParallelWork || rows < 2 * kRowGroup) {
    body(0, rows);
    return;
  }
  // A few blocks per thread so a descheduled worker does not hold up the rest.
  const int64_t blocks = std::min<int64_t>(int64_t{4} * threads_, rows / kRowGroup);
  const int64_t groups = (rows + kRowGroup - 1) / kRowGroup;
  const int64_t groups_per_block = (groups + blocks - 1) / blocks;
  const int64_t block_rows = groups_per_block * kRowGroup;
  const int64_t n_blocks = (rows + block_rows - 1) / block_rows;
  arena_->execute([&] {
    tbb::parallel_for(int64_t{0}, n_blocks, [&](int64_t b) {
      body(b * block_rows, std::min(rows, (b + 1) * block_rows));
    });
  });
}

void BlasBackend::product(std::span<float> y, const Matrix& w, InputCache& in) {
  const int64_t rows = w.rows, cols = w.cols;
  const ProductInput x = in.get(w.input);  // quantized here, once, before the threads split
  if (w.core()) {
    // A few blocks per thread (TBB's grain), below 64 Ki weights one block.
    if (threads_ == 1 || rows * cols < (int64_t{1} << 16)) {
      matvec_rows(y, w.tensor, x, 0, rows, kernel_);
      return;
    }
    const int64_t grain = std::max<int64_t>(16, rows / (8 * threads_));
    arena_->execute([&] {
      tbb::parallel_for(
          tbb::blocked_range<int64_t>(0, rows, grain), [&](const tbb::blocked_range<int64_t>& r) {
            matvec_rows(
                y.subspan(static_cast<size_t>(r.begin()), static_cast<size_t>(r.end() - r.begin())),
                w.tensor, x, r.begin(), r.end(), kernel_);
          });
    });
    return;
  }
  split_rows(rows, rows * cols, [&](int64_t r0, int64_t r1) {
    cblas_sgemv(CblasRowMajor, CblasNoTrans, static_cast<blasint>(r1 - r0),
                static_cast<blasint>(cols), 1.0f, w.f32.data() + r0 * cols,
                static_cast<blasint>(cols), x.f32.data(), 1, 0.0f, y.data() + r0, 1);
  });
}

void BlasBackend::product_batch(float* y, int64_t ldy, const Matrix& w, BatchInputCache& in,
                                int64_t n, bool accumulate) {
  const int64_t rows = w.rows, cols = w.cols;
  const ProductBatch x = in.get(w.input);
  if (w.core()) {
    // The sums land in bsum_ [n, rows] when they are to be added.
    float* out = accumulate ? bsum_.data() : y;
    const int64_t ld = accumulate ? rows : ldy;
    const std::span<float> all(out, static_cast<size_t>((n - 1) * ld + rows));
    // A few large blocks per thread (split_rows), not TBB's fine grain: the
    // batch kernel rearranges all the tokens on every call, which cost about
    // 40% of the product at 16 rows a call.
    split_rows(rows, rows * cols * n,
               [&](int64_t r0, int64_t r1) { matmat_rows(all, ld, w.tensor, x, r0, r1, kernel_); });
    if (accumulate) {
      for (int64_t t = 0; t < n; ++t) {
        for (int64_t r = 0; r < rows; ++r) y[t * ldy + r] += out[t * ld + r];
      }
    }
    return;
  }
  split_rows(rows, n * rows * cols, [&](int64_t r0, int64_t r1) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<blasint>(n),
                static_cast<blasint>(r1 - r0), static_cast<blasint>(cols), 1.0f, x.f32.data(),
                static_cast<blasint>(x.ld), w.f32.data() + r0 * cols, static_cast<blasint>(cols),
                accumulate ? 1.0f : 0.0f, y + r0, static_cast<blasint>(ldy));
  });
}

}  // namespace llama::blas
