// The graph compiler: Graph -> immutable Plan. Drops values no output needs,
// fuses a residual add into the matvec feeding it, orders instructions,
// computes every buffer's lifetime and plans the arena (inputs alive from the
// start, outputs to the end, views sharing their root's bytes).
#pragma once

#include "graph.hpp"
#include "llama/kernels/q8.hpp"
#include "plan.hpp"

namespace llama::graph {

struct CompileOptions {
  bool fuse_residual_add = true;
  Q8Kernel q8_kernel = best_q8_kernel();  // for matvec_typed (every kernel gives the same bits)
  Numerics numerics = Numerics::exact;    // for matvec_typed batches (bf16 may round inputs)
};

Plan compile(const Graph& graph, const CompileOptions& options = {});

}  // namespace llama::graph
