// The BLAS backend's products: each matrix's rows are split across the
// backend's oneTBB arena; for f32 weights every block is one single-threaded
// OpenBLAS call, for other dtypes one call of the core's kernel.
//
// Why not OpenBLAS's own threads: they are woken for every call (dozens of
// calls per token) and spin between calls; on a machine with other work
// running, their spinning competes with that work and leaves decode on two
// threads far slower than on one. Blocks start on 16-row boundaries so each
// row's dot product is summed the same way whatever the thread count.
#include <cblas.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>

#include <algorithm>
#include <array>

#include "blas_backend.hpp"
#include "llama/error.hpp"
#include "llama/kernels/products/gemm_f32.hpp"

namespace llama::blas {
namespace {

// Below this many multiply-adds a product is not worth splitting.
constexpr int64_t kMinParallelWork = int64_t{1} << 16;

// How one call's products (`work` multiply-adds in all) split across `threads`:
// a few blocks per thread over all the matrices together, so a descheduled
// worker does not hold up the rest; below kMinParallelWork one block per matrix
// on this thread.
struct Split {
  bool parallel;
  int64_t per_block;  // multiply-adds a block
};
Split split_for(int threads, int64_t work) {
  return {threads > 1 && work >= kMinParallelWork,
          std::max<int64_t>(1, work / (int64_t{4} * threads))};
}

// A matrix's rows [0, rows) as blocks of whole `unit`-row groups (each row summed
// the same way whatever the split) of about split.per_block of the matrix's
// `work` each: add(r0, r1) per block.
template <typename Add>
void add_row_blocks(const Split& split, int64_t rows, int64_t work, int64_t unit, const Add& add) {
  const int64_t groups = (rows + unit - 1) / unit;
  const int64_t n = split.parallel ? std::clamp<int64_t>(work / split.per_block, 1, groups) : 1;
  for (int64_t k = 0; k < n; ++k) {
    const int64_t r0 = std::min(rows, groups * k / n * unit);
    const int64_t r1 = std::min(rows, groups * (k + 1) / n * unit);
    if (r1 > r0) add(r0, r1);
  }
}

// run(block) for every block: one hand-off to the arena's threads, or on this
// thread when the split is not parallel or holds one block.
template <typename Block, typename Run>
void run_blocks(tbb::task_arena& arena, const Split& split, const std::vector<Block>& blocks,
                const Run& run) {
  if (!split.parallel || blocks.size() < 2) {
    for (const Block& b : blocks) run(b);
    return;
  }
  arena.execute(
      [&] { tbb::parallel_for(size_t{0}, blocks.size(), [&](size_t k) { run(blocks[k]); }); });
}

}  // namespace

void BlasBackend::product(std::span<float> y, const Matrix& w, InputCache& in) {
  products({{y, &w}}, in);
}

void BlasBackend::products(std::initializer_list<Output> outs, InputCache& in) {
  // Each matrix's input, quantized here, once per format, before the threads split.
  std::array<ProductInput, 3> inputs;
  if (outs.size() > inputs.size()) throw Error("blas: more than 3 products of one input");
  int64_t work = 0;
  size_t i = 0;
  for (const Output& o : outs) {
    inputs[i++] = in.get(o.w->input);
    work += o.w->rows * o.w->cols;
  }
  const auto run = [&](const RowBlock& b) {
    const Matrix& w = *b.w;
    if (w.core()) {
      matvec_rows(b.y, w.tensor, *b.x, b.r0, b.r1, kernel_);
      return;
    }
    cblas_sgemv(CblasRowMajor, CblasNoTrans, static_cast<blasint>(b.r1 - b.r0),
                static_cast<blasint>(w.cols), 1.0f, w.f32.data() + b.r0 * w.cols,
                static_cast<blasint>(w.cols), b.x->f32.data(), 1, 0.0f, b.y.data(), 1);
  };
  blocks_.clear();
  const Split split = split_for(threads_, work);
  i = 0;
  for (const Output& o : outs) {
    add_row_blocks(split, o.w->rows, o.w->rows * o.w->cols, kRowGroup, [&](int64_t r0, int64_t r1) {
      blocks_.push_back({o.y.subspan(static_cast<size_t>(r0), static_cast<size_t>(r1 - r0)), o.w,
                         &inputs[i], r0, r1});
    });
    ++i;
  }
  run_blocks(*arena_, split, blocks_, run);
}

void BlasBackend::product_batch(float* y, int64_t ldy, const Matrix& w, BatchInputCache& in,
                                int64_t n, bool accumulate, F32Gemm f32) {
  if (!accumulate) {
    product_batches({{y, ldy, &w}}, in, n, f32);
    return;
  }
  if (!w.core() && f32 == F32Gemm::sgemm) {
    product_batches({{y, ldy, &w, true}}, in, n, f32);  // sgemm adds with beta = 1
    return;
  }
  // The sums land in bsum_ [n, rows], then join y.
  const int64_t rows = w.rows;
  product_batches({{bsum_.data(), rows, &w}}, in, n, f32);
  for (int64_t t = 0; t < n; ++t) {
    for (int64_t r = 0; r < rows; ++r) y[t * ldy + r] += bsum_[static_cast<size_t>(t * rows + r)];
  }
}

void BlasBackend::product_batches(std::initializer_list<BatchOutput> outs, BatchInputCache& in,
                                  int64_t n, F32Gemm f32) {
  // Each matrix's input, quantized here, once per format, before the threads split.
  std::array<ProductBatch, 3> inputs;
  if (outs.size() > inputs.size()) throw Error("blas: more than 3 batch products of one input");
  int64_t work = 0;
  size_t i = 0;
  for (const BatchOutput& o : outs) {
    ProductBatch x = in.get(o.w->input);
    x.numerics = numerics_;
    // fast bf16 (amx-bf16, onednn-bf16): the batch rounded once for every product reading it.
    if (batch_rounds_to_bf16(o.w->tensor, kernel_, numerics_)) x.bf16 = in.bf16();
    inputs[i++] = x;
    work += o.w->rows * o.w->cols * n;
  }
  const auto run = [&](const BatchBlock& b) {
    const Matrix& w = *b.w;
    const ProductBatch& x = *b.x;
    const int64_t cols = w.cols;
    if (w.core()) {
      const std::span<float> all(b.y, static_cast<size_t>((n - 1) * b.ldy + w.rows));
      matmat_rows(all, b.ldy, w.tensor, x, b.r0, b.r1, kernel_);
    } else if (f32 == F32Gemm::core) {
      // Each (token, row) sum one FMA chain in column order whatever the batch's
      // shape (kernels/products/gemm_f32.hpp), where sgemm's sums change with it.
      gemm_f32_rows(b.y, b.ldy, w.f32.data(), x.f32.data(), x.ld, cols, n, b.r0, b.r1, nullptr, 0);
    } else {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<blasint>(n),
                  static_cast<blasint>(b.r1 - b.r0), static_cast<blasint>(cols), 1.0f, x.f32.data(),
                  static_cast<blasint>(x.ld), w.f32.data() + b.r0 * cols,
                  static_cast<blasint>(cols), b.accumulate ? 1.0f : 0.0f, b.y + b.r0,
                  static_cast<blasint>(b.ldy));
    }
  };
  // Large blocks, not TBB's fine grain: the batch kernels rearrange all the
  // tokens on every call, which would take much of the product's time at a few
  // rows a call. One hand-off to the threads for wq/wk/wv and for w1/w3, which at
  // one or two tokens a call is much of a product's time. f32 GEMM blocks hold
  // whole packed panels.
  batch_blocks_.clear();
  const Split split = split_for(threads_, work);
  i = 0;
  for (const BatchOutput& o : outs) {
    const int64_t unit = !o.w->core() && f32 == F32Gemm::core ? kGemmRowUnit : kRowGroup;
    add_row_blocks(split, o.w->rows, o.w->rows * o.w->cols * n, unit, [&](int64_t r0, int64_t r1) {
      batch_blocks_.push_back({o.y, o.ldy, o.accumulate, o.w, &inputs[i], r0, r1});
    });
    ++i;
  }
  run_blocks(*arena_, split, batch_blocks_, run);
}

}  // namespace llama::blas
