// The executor's typed-weight instructions: runq.c's RMSNorm, activation
// quantization into the arena, bf16 rounding of a batch into the arena, and
// the typed matrix-vector product (the core's kernels) split into row blocks.
#pragma once

#include <cstdint>

#include "executor.hpp"
#include "llama/kernels/products/llama2c_int8.hpp"
#include "llama/numerics.hpp"
#include "llama/tensor.hpp"
#include "plan.hpp"

namespace llama::graph {

// Row (token) t of one instruction on `arena`.
void run_rmsnorm_fma(const Instruction& in, float* arena, int64_t t);
void run_quantize(const Instruction& in, float* arena, int64_t t);
// Rows [0, tokens) of one instruction on `arena`.
// `batch_plan`: the batch kernels even for one row (Executor::run_instruction).
void run_matvec_typed(const Executor& exec, const Instruction& in, float* arena, int64_t tokens,
                      bool batch_plan);
// round_bf16: rows [0, tokens) of in.a into in.out's bf16 rows, split across threads.
void run_round_bf16(const Executor& exec, const Instruction& in, float* arena, int64_t tokens);

}  // namespace llama::graph
