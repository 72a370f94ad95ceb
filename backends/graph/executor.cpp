// Executor: one switch per instruction, matrix products split into row blocks.
#include "executor.hpp"

#include <algorithm>

#include "kernels.hpp"
#include "llama/error.hpp"
#include "llama/kernels/products/gemm_f32.hpp"
#include "typed_ops.hpp"

namespace llama::graph {
namespace {

// Below this many weight floats a product runs on one thread: the hand-off
// costs more than it saves.
constexpr int64_t kParallelMinFloats = int64_t{1} << 15;
// Row-wise ops split across threads from this many rows (tokens) on.
constexpr int64_t kParallelMinTokens = 4;

}  // namespace

Executor::Executor(int threads)
    : threads_(threads), arena_(std::make_unique<tbb::task_arena>(threads)) {
  if (threads < 1) throw Error("graph: threads must be >= 1, got " + std::to_string(threads));
}

void Executor::run(const Plan& plan, std::span<float> arena, int64_t tokens) const {
  if (tokens < 1 || tokens > plan.tokens || arena.size() < plan.arena_floats()) {
    throw Error("graph: plan run with " + std::to_string(tokens) + " token(s) on an arena of " +
                std::to_string(arena.size()) + " floats");
  }
  // The whole plan runs inside the arena: the calling thread joins it once and
  // the parallel products start from within (no hand-off per instruction).
  arena_->execute([&] {
    const bool batch = plan.tokens > 1;
    for (const Instruction& in : plan.instructions)
      run_instruction(in, arena.data(), tokens, batch);
  });
}

void Executor::run_instruction(const Instruction& in, float* arena, int64_t tokens,
                               bool batch) const {
  // Row-wise ops on a batch: tokens split across the threads (a row's result
  // never depends on the split): swiglu's exp alone is too much work to leave
  // to the calling thread while the others wait.
  const auto per_token = [&](int64_t n, const auto& body) {
    for_each(n, n >= kParallelMinTokens, body);
  };
  float* out = arena + in.out.offset;
  const float* a = arena + in.a.offset;
  const float* b = arena + in.b.offset;
  switch (in.op) {
    case Op::matvec:
    case Op::matvec_add: {
      const float* residual = in.op == Op::matvec_add ? b : nullptr;
      const int64_t rows = in.w_rows;
      const bool parallel = rows * in.w_cols * tokens >= kParallelMinFloats;
      // A few blocks per thread: balance when a core is shared, yet each block
      // long enough (hundreds of rows) to stream the weights at full speed.
      // Blocks hold whole units: 8 rows for decode's passes, a packed panel
      // for batches (a split panel would cost a whole one on each side).
      const int64_t unit = batch ? kGemmRowUnit : 8;
      const int64_t units = (rows + unit - 1) / unit;
      const int64_t n_blocks =
          parallel ? std::max<int64_t>(1, std::min({int64_t{threads_} * 4, rows / 16, units})) : 1;
      for_each(n_blocks, parallel, [&](int64_t blk) {
        const int64_t r0 = blk * units / n_blocks * unit;
        const int64_t r1 = std::min(rows, (blk + 1) * units / n_blocks * unit);
        if (r0 >= r1) return;
        if (!batch) {
          matvec_rows(out, in.w, a, in.w_cols, r0, r1, residual);
        } else {
          gemm_f32_rows(out, in.out.ld, in.w, a, in.a.ld, in.w_cols, tokens, r0, r1, residual,
                        in.b.ld);
        }
      });
      break;
    }
    case Op::rmsnorm:
      per_token(tokens, [&](int64_t t) {
        rmsnorm_row(out + t * in.out.ld, a + t * in.a.ld, in.w, in.out.cols, in.eps);
      });
      break;
    case Op::add:
      per_token(tokens, [&](int64_t t) {
        add_row(out + t * in.out.ld, a + t * in.a.ld, b + t * in.b.ld, in.out.cols);
      });
      break;
    case Op::swiglu:
      per_token(tokens, [&](int64_t t) {
        swiglu_row(out + t * in.out.ld, a + t * in.a.ld, b + t * in.b.ld, in.out.cols);
      });
      break;
    case Op::rmsnorm_fma:
      per_token(tokens, [&](int64_t t) { run_rmsnorm_fma(in, arena, t); });
      break;
    case Op::quantize:
      per_token(tokens, [&](int64_t t) { run_quantize(in, arena, t); });
      break;
    case Op::matvec_typed:
      run_matvec_typed(*this, in, arena, tokens, batch);
      break;
    case Op::round_bf16:
      run_round_bf16(*this, in, arena, tokens);
      break;
    default:
      throw Error(std::string("graph: no kernel for ") + op_name(in.op));
  }
}

}  // namespace llama::graph
