// Q8_0 instructions on the arena. A quantized value's f32 scales sit at its
// ArenaRef offset and its i8 values at the instruction's q_values byte offset
// (plan.hpp); every row result comes from the core's q8_matvec_rows, so the
// thread count and the row blocking never change a bit.
#include "q8_ops.hpp"

#include <algorithm>
#include <span>

#include "llama/q8.hpp"
#include "llama/q8_math.hpp"

namespace llama::graph {
namespace {

size_t sz(int64_t n) { return static_cast<size_t>(n); }

// Below this many weight bytes a product runs on one thread.
constexpr int64_t kParallelMinBytes = int64_t{1} << 16;
// Rows per pass over the tokens of a batch: 64 rows of int8 weights stay in L2.
constexpr int64_t kBatchRows = 64;

}  // namespace

void run_rmsnorm_fma(const Instruction& in, float* arena, int64_t tokens) {
  const size_t n = sz(in.out.cols);
  for (int64_t t = 0; t < tokens; ++t) {
    q8::rmsnorm({arena + in.out.offset + t * in.out.ld, n}, {arena + in.a.offset + t * in.a.ld, n},
                {in.w, n});
  }
}

void run_quantize(const Instruction& in, float* arena, int64_t tokens) {
  const int64_t cols = in.out.cols, groups = cols / in.group_size;
  float* scales = arena + in.out.offset;                          // f32 [tokens, groups]
  auto* values = reinterpret_cast<int8_t*>(arena) + in.q_values;  // i8 [tokens, cols]
  for (int64_t t = 0; t < tokens; ++t) {
    quantize_activations({arena + in.a.offset + t * in.a.ld, sz(cols)},
                         {values + t * cols, sz(cols)}, {scales + t * groups, sz(groups)},
                         in.group_size);
  }
}

void run_matvec_q8(const Executor& exec, const Instruction& in, float* arena, int64_t tokens) {
  const int64_t rows = in.w_rows, cols = in.w_cols, groups = cols / in.group_size;
  const float* scales = arena + in.a.offset;
  const auto* values = reinterpret_cast<const int8_t*>(arena) + in.q_values;
  float* out = arena + in.out.offset;
  const auto x = [&](int64_t t) {
    return Q8View({values + t * cols, sz(cols)}, {scales + t * groups, sz(groups)}, in.group_size);
  };
  const int threads = exec.threads();
  const bool parallel = rows * cols * tokens >= kParallelMinBytes;
  // As the f32 product: a few blocks per thread, whole multiples of 8 rows.
  const int64_t n_blocks =
      parallel ? std::max<int64_t>(1, std::min<int64_t>(threads * 4, rows / 16)) : 1;
  const int64_t per = (rows + n_blocks - 1) / n_blocks;
  const int64_t rows_per_block = (per + 7) / 8 * 8;
  exec.for_each(n_blocks, parallel, [&](int64_t blk) {
    const int64_t r0 = blk * rows_per_block;
    const int64_t r1 = std::min(rows, r0 + rows_per_block);
    // A batch passes every token over a few rows before moving on, so each
    // weight row is read from memory once.
    const int64_t step = tokens == 1 ? std::max<int64_t>(r1 - r0, 1) : kBatchRows;
    for (int64_t b0 = r0; b0 < r1; b0 += step) {
      const int64_t b1 = std::min(r1, b0 + step);
      for (int64_t t = 0; t < tokens; ++t) {
        q8_matvec_rows({out + t * in.out.ld + b0, sz(b1 - b0)}, in.qw, x(t), b0, b1, in.q8_kernel);
      }
    }
  });
}

}  // namespace llama::graph
