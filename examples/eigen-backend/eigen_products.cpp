// The eigen backend's products over the weights in place: a fused f64
// matrix-vector loop of Eigen array expressions (decode) and Eigen's f32
// matrix-matrix product (prompt). Each matrix's rows are split across the
// backend's oneTBB arena in blocks of whole 16-row groups, so a row's sum does not
// depend on the thread count.
//
// Decode accumulates in double: with random weights and a 32000-token vocabulary the
// nucleus holds thousands of nearly equal probabilities, and an f32 sum in Eigen's
// order sent parity.json's mini32k-story off run.c's stream at position 42 (two
// candidates 1e-6 apart swapped places). Each step widens 8 floats of 4 rows and
// multiplies them by x's 8 doubles, `acc += row.cast<double>() * x` on fixed-size
// Eigen arrays, which GCC compiles to one vcvtps2pd and one vfmadd231pd a row (a
// dynamic-size `.cast<double>()` is never vectorized: Eigen 3.4 has no float-to-double
// packet cast). So decode reads the f32 weights once, with no scratch, and stays bound
// by memory, provided the reads keep streaming: 4 interleaved rows defeat the hardware
// prefetcher, so each block of rows prefetches the next block in order (without it,
// decode ran at half the BLAS backend's speed). The prompt's products stay f32
// (compute-bound).
#include <tbb/parallel_for.h>

#include <algorithm>

#include "eigen_backend.hpp"

namespace eigen_backend {
namespace {

// Below this many multiply-adds a product is not worth splitting.
constexpr int64_t kMinParallelWork = int64_t{1} << 16;

using DoubleVector = Eigen::Matrix<double, Eigen::Dynamic, 1>;
// Decode's step: 8 columns of a row widened to f64 and multiplied by x's 8 (one
// AVX-512 register of doubles), summed into one f64 [8] accumulator per row.
constexpr int64_t kStep = 8;
using FloatStep = Eigen::Array<float, kStep, 1>;
using DoubleStep = Eigen::Array<double, kStep, 1>;
// Rows summed side by side: each step's x is loaded once for all of them, and
// their accumulators are independent chains (hiding the multiply-add latency).
constexpr int64_t kDecodeRows = 4;
constexpr int64_t kFloatsPerLine = 16;  // one 64-byte cache line of f32
using StridedRows = Eigen::Map<RowMatrix, 0, Eigen::OuterStride<>>;

}  // namespace

void EigenBackend::split_rows(int64_t rows, int64_t work,
                              const std::function<void(int64_t, int64_t)>& body) {
  if (threads_ == 1 || work < kMinParallelWork || rows < 2 * kRowGroup) {
    body(0, rows);
    return;
  }
  // A few blocks per thread, so a descheduled worker does not hold up the rest.
  const int64_t groups = (rows + kRowGroup - 1) / kRowGroup;
  const int64_t blocks = std::min<int64_t>(kBlocksPerThread * threads_, groups);
  const int64_t block_rows = (groups + blocks - 1) / blocks * kRowGroup;
  const int64_t n_blocks = (rows + block_rows - 1) / block_rows;
  arena_->execute([&] {
    tbb::parallel_for(int64_t{0}, n_blocks, [&](int64_t b) {
      body(b * block_rows, std::min(rows, (b + 1) * block_rows));
    });
  });
}

void EigenBackend::matvec(std::span<float> y, const Matrix& w, std::span<const float> x) {
  const int64_t cols = w.cols, body = cols / kStep * kStep;
  std::copy_n(x.begin(), cols, xd_.begin());
  const double* xd = xd_.data();
  split_rows(w.rows, w.rows * cols, [&](int64_t r0, int64_t r1) {
    int64_t r = r0;
    for (; r + kDecodeRows <= r1; r += kDecodeRows) {
      const float* rows = w.data + r * cols;  // f32 [kDecodeRows, cols]
      // The next rows' bytes, in order (the last block's own: no address past w).
      const float* next = r + 2 * kDecodeRows <= w.rows ? rows + kDecodeRows * cols : rows;
      DoubleStep sums[kDecodeRows];
      for (DoubleStep& s : sums) s.setZero();
      for (int64_t j = 0; j < body; j += kStep) {
        if (j % kFloatsPerLine == 0) {
          // kDecodeRows lines of the next rows per line of these: the whole next
          // block arrives while this one is summed.
          for (int64_t line = 0; line < kDecodeRows; ++line) {
            const int64_t at = kDecodeRows * j + line * kFloatsPerLine;
            if (at < kDecodeRows * cols) __builtin_prefetch(next + at, 0, 2);
          }
        }
        const Eigen::Map<const DoubleStep> xj(xd + j);
        for (int64_t i = 0; i < kDecodeRows; ++i) {
          sums[i] += Eigen::Map<const FloatStep>(rows + i * cols + j).cast<double>() * xj;
        }
      }
      for (int64_t i = 0; i < kDecodeRows; ++i) {
        double sum = sums[i].sum();
        for (int64_t j = body; j < cols; ++j) sum += double(rows[i * cols + j]) * xd[j];
        y[static_cast<size_t>(r + i)] = static_cast<float>(sum);
      }
    }
    const Eigen::Map<const DoubleVector> in(xd, cols);
    for (; r < r1; ++r) {  // the last rows of a matrix whose row count is not a multiple of 4
      const Eigen::Map<const Eigen::VectorXf> row(w.data + r * cols, cols);
      y[static_cast<size_t>(r)] = static_cast<float>(row.cast<double>().dot(in));
    }
  });
}

void EigenBackend::matmul(float* c, int64_t ldc, const float* a, const Matrix& w, int64_t n,
                          bool accumulate) {
  const ConstMatrixMap in(a, n, w.cols);
  split_rows(w.rows, n * w.rows * w.cols, [&](int64_t r0, int64_t r1) {
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
