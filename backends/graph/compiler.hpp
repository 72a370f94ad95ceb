// The graph compiler: Graph -> immutable Plan. Drops values no output needs,
// fuses a residual add into the matvec feeding it, orders instructions,
// computes every buffer's lifetime and plans the arena (inputs alive from the
// start, outputs to the end, views sharing their root's bytes).
#pragma once

#include "graph.hpp"
#include "llama/kernels/products/llama2c_int8.hpp"
#include "plan.hpp"

namespace llama::graph {

struct CompileOptions {
  bool fuse_residual_add = true;
  KernelSet q8_kernel = best_kernel_set();  // for matvec_typed (every kernel gives the same bits)
  Numerics numerics = Numerics::exact;      // for matvec_typed batches (bf16 may round inputs)
};

Plan compile(const Graph& graph, const CompileOptions& options = {});

}  // namespace llama::graph
