// The executor: replays a compiled plan over an arena, with no allocation.
// Matrix products are split into row blocks across a persistent oneTBB arena,
// or inside decode() across a RowTeam (llama/row_team.hpp: a hand-off of
// about a microsecond, each thread on one contiguous share of the rows);
// element-wise work runs on the calling thread.
#pragma once

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>

#include "llama/row_team.hpp"
#include "plan.hpp"

namespace llama::graph {

class Executor {
 public:
  explicit Executor(int threads);  // threads >= 1

  int threads() const { return threads_; }

  // Runs every instruction of `plan` for the first `tokens` rows (<= plan.tokens)
  // on `arena` (at least plan.arena_floats() floats, inputs already written).
  void run(const Plan& plan, std::span<float> arena, int64_t tokens) const;

  // Runs fn() (one token's forward pass) as a RowTeam session: its products
  // and for_each calls run on the team, whose workers spin between them.
  template <typename Fn>
  void decode(const Fn& fn) const {
    const RowTeam::Session session(team_);
    fn();
  }

  // Calls body(i) for i in [0, n) on the arena's threads (the team's inside
  // decode()) when `parallel`.
  template <typename Body>
  void for_each(int64_t n, bool parallel, const Body& body) const;

  // Calls body(r0, r1) over [0, rows) in blocks of whole `unit`s of rows. In
  // decode() on the team: chunks of about RowTeam::kProductChunkBytes, each thread's share
  // contiguous. Else `blocks` blocks on the arena (for_each). Bits: every
  // block starts on a unit, so a row's sum never depends on the split.
  template <typename Body>
  void for_rows(int64_t rows, int64_t unit, int64_t row_bytes, int64_t blocks, bool parallel,
                const Body& body) const;

 private:
  void run_instruction(const Instruction& in, float* arena, int64_t tokens) const;

  int threads_;
  std::unique_ptr<tbb::task_arena> arena_;
  mutable RowTeam team_;  // decode's threads (run() and sessions change no plan state)
};

template <typename Body>
void Executor::for_each(int64_t n, bool parallel, const Body& body) const {
  if (!parallel || threads_ == 1 || n < 2) {
    for (int64_t i = 0; i < n; ++i) body(i);
    return;
  }
  if (team_.in_session() && n <= RowTeam::kMaxChunks) {
    team_.run(n, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) body(i);
    });
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

template <typename Body>
void Executor::for_rows(int64_t rows, int64_t unit, int64_t row_bytes, int64_t blocks,
                        bool parallel, const Body& body) const {
  if (parallel && threads_ > 1 && team_.in_session()) {
    const int64_t units = (rows + unit - 1) / unit;
    int64_t per =
        std::max<int64_t>(1, RowTeam::kProductChunkBytes / std::max<int64_t>(1, unit * row_bytes));
    per = std::max(per, (units + RowTeam::kMaxChunks - 1) / RowTeam::kMaxChunks);
    const int64_t chunk_rows = per * unit;
    team_.run((rows + chunk_rows - 1) / chunk_rows, [&](int64_t c0, int64_t c1) {
      body(c0 * chunk_rows, std::min(rows, c1 * chunk_rows));
    });
    return;
  }
  const int64_t units = (rows + unit - 1) / unit;
  for_each(blocks, parallel, [&](int64_t blk) {
    const int64_t r0 = blk * units / blocks * unit;
    const int64_t r1 = std::min(rows, (blk + 1) * units / blocks * unit);
    if (r0 < r1) body(r0, r1);
  });
}

}  // namespace llama::graph
