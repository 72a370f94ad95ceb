// Executor: one switch per instruction, matrix products split into row blocks.
#include "executor.hpp"

#include <algorithm>

#include "kernels.hpp"
#include "llama/error.hpp"

namespace llama::graph {
namespace {

// Below this many weight floats a product runs on one thread: the hand-off
// costs more than it saves.
constexpr int64_t kParallelMinFloats = int64_t{1} << 15;

}  // namespace

Executor::Executor(int threads)
    : threads_(threads), arena_(std::make_unique<tbb::task_arena>(threads)) {
  if (threads < 1) throw Error("graph: threads must be >= 1, got " + std::to_string(threads));
}

void Executor::reserve(int64_t tokens, int64_t cols) {
  const auto x_need = static_cast<size_t>(tokens * cols);
  if (x_wide_.size() < x_need) x_wide_.assign(x_need, 0.0);
  const auto slot = static_cast<size_t>(matmul_scratch_doubles(cols));
  if (w_slot_ < slot) {
    w_slot_ = slot;
    w_wide_.assign(w_slot_ * static_cast<size_t>(threads_), 0.0);
  }
}

void Executor::reserve(const Plan& plan) {
  if (plan.tokens == 1) return;
  for (const Instruction& in : plan.instructions) {
    if (in.op == Op::matvec || in.op == Op::matvec_add) reserve(plan.tokens, in.w_cols);
  }
}

void Executor::run(const Plan& plan, std::span<float> arena, int64_t tokens) {
  if (tokens < 1 || tokens > plan.tokens || arena.size() < plan.arena_floats()) {
    throw Error("graph: plan run with " + std::to_string(tokens) + " token(s) on an arena of " +
                std::to_string(arena.size()) + " floats");
  }
  for (const Instruction& in : plan.instructions) run_instruction(in, arena.data(), tokens);
}

void Executor::run_instruction(const Instruction& in, float* arena, int64_t tokens) {
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
      const int64_t n_blocks =
          parallel ? std::max<int64_t>(1, std::min<int64_t>(threads_ * 4, rows / 16)) : 1;
      const int64_t per = (rows + n_blocks - 1) / n_blocks;
      const int64_t rows_per_block = (per + 7) / 8 * 8;
      if (tokens > 1) {
        reserve(tokens, in.w_cols);
        widen_rows(x_wide_.data(), a, in.a.ld, tokens, in.w_cols);
      }
      for_each(n_blocks, parallel, [&](int64_t blk) {
        const int64_t r0 = blk * rows_per_block;
        const int64_t r1 = std::min(rows, r0 + rows_per_block);
        if (r0 >= r1) return;
        if (tokens == 1) {
          matvec_rows(out, in.w, a, in.w_cols, r0, r1, residual);
          return;
        }
        // Each arena thread owns one slot of W scratch (run serially: slot 0).
        const int index = tbb::this_task_arena::current_thread_index();
        const int slot = parallel && index >= 0 && index < threads_ ? index : 0;
        double* scratch = w_wide_.data() + static_cast<size_t>(slot) * w_slot_;
        matmul_rows(out, in.out.ld, in.w, x_wide_.data(), in.w_cols, tokens, r0, r1, residual,
                    in.b.ld, scratch);
      });
      break;
    }
    case Op::rmsnorm:
      for (int64_t t = 0; t < tokens; ++t) {
        rmsnorm_row(out + t * in.out.ld, a + t * in.a.ld, in.w, in.out.cols);
      }
      break;
    case Op::add:
      for (int64_t t = 0; t < tokens; ++t) {
        add_row(out + t * in.out.ld, a + t * in.a.ld, b + t * in.b.ld, in.out.cols);
      }
      break;
    case Op::swiglu:
      for (int64_t t = 0; t < tokens; ++t) {
        swiglu_row(out + t * in.out.ld, a + t * in.a.ld, b + t * in.b.ld, in.out.cols);
      }
      break;
    default:
      throw Error(std::string("graph: no kernel for ") + op_name(in.op));
  }
}

}  // namespace llama::graph
