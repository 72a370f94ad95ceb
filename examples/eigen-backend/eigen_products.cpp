// The eigen backend's products: Eigen's matrix-vector product (decode) and
// matrix-matrix product (prompt) over the weights in place. Each matrix's rows are
// split across the backend's oneTBB arena in blocks of whole 16-row groups, each block
// one single-threaded Eigen product, so a row's sum does not depend on the thread count.
//
// Decode accumulates in double: with random weights and a 32000-token vocabulary the
// nucleus holds thousands of nearly equal probabilities, and an f32 sum in Eigen's
// order sent parity.json's mini32k-story off run.c's stream at position 42 (two
// candidates 1e-6 apart swapped places). Eigen has no float-to-double packet cast, so
// each 4 rows are widened into a small double scratch (L1-resident) and
// multiplied there by Eigen's double GEMV; decode stays bound by reading the f32
// weights once. The prompt's matrix-matrix products stay f32 (compute-bound).
#include <tbb/parallel_for.h>

#include <algorithm>

#include "eigen_backend.hpp"

namespace eigen_backend {
namespace {

// Below this many multiply-adds a product is not worth splitting.
constexpr int64_t kMinParallelWork = int64_t{1} << 16;

using DoubleVector = Eigen::Matrix<double, Eigen::Dynamic, 1>;
using DoubleRowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using StridedRows = Eigen::Map<RowMatrix, 0, Eigen::OuterStride<>>;

}  // namespace

void EigenBackend::split_rows(int64_t rows, int64_t work,
                              const std::function<void(int64_t, int64_t, int64_t)>& body) {
  if (threads_ == 1 || work < kMinParallelWork || rows < 2 * kRowGroup) {
    body(0, 0, rows);
    return;
  }
  // A few blocks per thread, so a descheduled worker does not hold up the rest.
  const int64_t groups = (rows + kRowGroup - 1) / kRowGroup;
  const int64_t blocks = std::min<int64_t>(kBlocksPerThread * threads_, groups);
  const int64_t block_rows = (groups + blocks - 1) / blocks * kRowGroup;
  const int64_t n_blocks = (rows + block_rows - 1) / block_rows;
  arena_->execute([&] {
    tbb::parallel_for(int64_t{0}, n_blocks, [&](int64_t b) {
      body(b, b * block_rows, std::min(rows, (b + 1) * block_rows));
    });
  });
}

void EigenBackend::matvec(std::span<float> y, const Matrix& w, std::span<const float> x) {
  using WidenedRows = Eigen::Matrix<double, kWidenRows, Eigen::Dynamic, Eigen::RowMajor>;
  const int64_t cols = w.cols;
  std::copy_n(x.begin(), cols, xd_.begin());
  const Eigen::Map<const DoubleVector> in(xd_.data(), cols);
  split_rows(w.rows, w.rows * cols, [&](int64_t block, int64_t r0, int64_t r1) {
    double* scratch = widened_.data() + block * kWidenRows * max_cols_;  // f64 [kWidenRows, cols]
    for (int64_t g = r0; g < r1; g += kWidenRows) {
      const int64_t n = std::min(kWidenRows, r1 - g);
      // f32 -> f64 exactly; a plain loop the compiler vectorizes. Four rows of
      // doubles stay in L1 for the product that follows.
      const float* from = w.data + g * cols;
      for (int64_t i = 0; i < n * cols; ++i) scratch[i] = from[i];
      if (n == kWidenRows) {
        const Eigen::Map<const WidenedRows> rows(scratch, kWidenRows, cols);
        const Eigen::Matrix<double, kWidenRows, 1> sums = rows * in;
        for (int64_t i = 0; i < n; ++i) y[static_cast<size_t>(g + i)] = static_cast<float>(sums[i]);
      } else {
        const Eigen::Map<const DoubleRowMatrix> rows(scratch, n, cols);
        const DoubleVector sums = rows * in;  // the last rows of a matrix only
        for (int64_t i = 0; i < n; ++i) y[static_cast<size_t>(g + i)] = static_cast<float>(sums[i]);
      }
    }
  });
}

void EigenBackend::matmul(float* c, int64_t ldc, const float* a, const Matrix& w, int64_t n,
                          bool accumulate) {
  const ConstMatrixMap in(a, n, w.cols);
  split_rows(w.rows, n * w.rows * w.cols, [&](int64_t, int64_t r0, int64_t r1) {
    StridedRows out(c + r0, n, r1 - r0, Eigen::OuterStride<>(ldc));
    const auto rows = w.map().middleRows(r0, r1 - r0);
    if (accumulate) {
      out.noalias() += in * rows.transpose();
    } else {
      out.noalias() = in * rows.transpose();
    }
  });
}

}  // namespace eigen_backend
