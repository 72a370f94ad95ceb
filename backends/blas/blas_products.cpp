// The BLAS backend's f32 products: each matrix's rows are split across the
// backend's oneTBB arena and every block is one single-threaded OpenBLAS call.
//
// Why not OpenBLAS's own threads: they are woken for every call (about 45
// calls per token on the 15M shape) and spin between calls; on a machine with
// other work running, that collapsed decode with 2 threads to 11-22 tok/s
// against 100 with one (15M shape, llama-cli -j 2 vs -j 1, same run). Blocks
// start on 16-row boundaries so each row's dot product is summed the same
// way whatever the thread count.
#include <cblas.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>

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

void BlasBackend::matvec(std::span<float> y, std::span<const float> w, std::span<const float> x) {
  const auto rows = static_cast<int64_t>(y.size());
  const auto cols = static_cast<int64_t>(x.size());
  split_rows(rows, rows * cols, [&](int64_t r0, int64_t r1) {
    cblas_sgemv(CblasRowMajor, CblasNoTrans, static_cast<blasint>(r1 - r0),
                static_cast<blasint>(cols), 1.0f, w.data() + r0 * cols, static_cast<blasint>(cols),
                x.data(), 1, 0.0f, y.data() + r0, 1);
  });
}

void BlasBackend::matmul(float* c, int64_t ldc, const float* a, std::span<const float> w, int64_t n,
                         int64_t rows, int64_t cols, float beta) {
  split_rows(rows, n * rows * cols, [&](int64_t r0, int64_t r1) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<blasint>(n),
                static_cast<blasint>(r1 - r0), static_cast<blasint>(cols), 1.0f, a,
                static_cast<blasint>(cols), w.data() + r0 * cols, static_cast<blasint>(cols), beta,
                c + r0, static_cast<blasint>(ldc));
  });
}

}  // namespace llama::blas
