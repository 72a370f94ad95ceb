// Q8_0 instructions on the arena. A quantized value's f32 scales sit at its
// ArenaRef offset and its i8 values at the instruction's q_values byte offset
// (plan.hpp); every row result comes from the core's q8_matvec_rows (one
// token) or q8_matmat_rows (a batch), which agree bit for bit, so the thread
// count, the row blocking and the batch size never change a bit.
#include "q8_ops.hpp"

#include <algorithm>
#include <span>

#include "llama/kernels/q8.hpp"
#include "llama/kernels/q8_math.hpp"

namespace llama::graph {
namespace {

size_t sz(int64_t n) { return static_cast<size_t>(n); }

// Below this many weight bytes a product runs on one thread.
constexpr int64_t kParallelMinBytes = int64_t{1} << 16;

}  // namespace

void run_rmsnorm_fma(const Instruction& in, float* arena, int64_t t) {
  const size_t n = sz(in.out.cols);
  q8::rmsnorm({arena + in.out.offset + t * in.out.ld, n}, {arena + in.a.offset + t * in.a.ld, n},
              {in.w, n}, in.eps);
}

void run_quantize(const Instruction& in, float* arena, int64_t t) {
  const int64_t cols = in.out.cols, groups = cols / in.group_size;
  float* scales = arena + in.out.offset;                          // f32 [tokens, groups]
  auto* values = reinterpret_cast<int8_t*>(arena) + in.q_values;  // i8 [tokens, cols]
  quantize_activations({arena + in.a.offset + t * in.a.ld, sz(cols)}, {values + t * cols, sz(cols)},
                       {scales + t * groups, sz(groups)}, in.group_size);
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
  // A batch goes through the core's batch kernel (16 tokens in the lanes of a
  // register; it walks the rows 64 at a time so they stay in L2 while every
  // token passes over them, each weight row read from memory once). One call
  // per block: the kernel rearranges the batch on every call.
  const Q8BatchView batch{
      {values, sz(tokens * cols)}, {scales, sz(tokens * groups)}, cols, in.group_size};
  const std::span<float> all(out, sz((tokens - 1) * in.out.ld + rows));
  exec.for_each(n_blocks, parallel, [&](int64_t blk) {
    const int64_t r0 = blk * rows_per_block;
    const int64_t r1 = std::min(rows, r0 + rows_per_block);
    if (tokens == 1) {
      if (r1 > r0) q8_matvec_rows({out + r0, sz(r1 - r0)}, in.qw, x(0), r0, r1, in.q8_kernel);
      return;
    }
    if (r1 > r0) q8_matmat_rows(all, in.out.ld, in.qw, batch, r0, r1, in.q8_kernel);
  });
}

}  // namespace llama::graph
