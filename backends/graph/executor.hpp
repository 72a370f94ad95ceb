// The executor: replays a compiled plan over an arena, with no allocation.
// Matrix products are split into row blocks across a persistent oneTBB arena;
// element-wise work runs on the calling thread.
#pragma once

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>

#include <cstdint>
#include <memory>
#include <span>

#include "plan.hpp"

namespace llama::graph {

class Executor {
 public:
  explicit Executor(int threads);  // threads >= 1

  int threads() const { return threads_; }

  // Runs every instruction of `plan` for the first `tokens` rows (<= plan.tokens)
  // on `arena` (at least plan.arena_floats() floats, inputs already written).
  void run(const Plan& plan, std::span<float> arena, int64_t tokens) const;

  // Calls body(i) for i in [0, n) on the arena's threads when `parallel`.
  template <typename Body>
  void for_each(int64_t n, bool parallel, const Body& body) const;

 private:
  // `batch`: the plan was compiled for a batch, so its products run the batch
  // kernels whatever `tokens` is (a row's bits then never depend on how many
  // rows share the call); a decode plan's run the single-vector kernels.
  void run_instruction(const Instruction& in, float* arena, int64_t tokens, bool batch) const;

  int threads_;
  std::unique_ptr<tbb::task_arena> arena_;
};

template <typename Body>
void Executor::for_each(int64_t n, bool parallel, const Body& body) const {
  if (!parallel || threads_ == 1 || n < 2) {
    for (int64_t i = 0; i < n; ++i) body(i);
    return;
  }
  // Body runs inside the persistent arena; static partitioning keeps the same
  // blocks on the same threads, nothing is allocated per call.
  arena_->execute([&] {
    tbb::parallel_for(
        tbb::blocked_range<int64_t>(0, n, 1),
        [&](const tbb::blocked_range<int64_t>& r) {
          for (int64_t i = r.begin(); i < r.end(); ++i) body(i);
        },
        tbb::static_partitioner());
  });
}

}  // namespace llama::graph
