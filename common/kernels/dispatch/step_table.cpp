// The two sets of step kernels and the choice between them.
#include "llama/kernels/dispatch/step_table.hpp"

#include "llama/kernels/steps/run_c.hpp"
#include "llama/kernels/steps/runq_c.hpp"

namespace llama {

StepArithmetic step_arithmetic(const ModelWeights& weights) {
  return weights.dtypes().contains(DType::q8_0) ? StepArithmetic::runq_c : StepArithmetic::run_c;
}

const StepKernels& step_kernels(StepArithmetic arithmetic) {
  static constexpr StepKernels kRunC{&llama::rmsnorm,      &llama::rope_rotate,
                                     &llama::attend_head,  &llama::attend_queries,
                                     &llama::attend_token, "run.c's (sums in double)"};
  static constexpr StepKernels kRunQC{&q8::rmsnorm,      &q8::rope_rotate,
                                      &q8::attend_head,  &q8::attend_queries,
                                      &q8::attend_token, "runq.c's (f32 FMAs)"};
  return arithmetic == StepArithmetic::runq_c ? kRunQC : kRunC;
}

size_t attend_scratch_floats(int64_t head_size, int64_t n_keys) {
  // q8's block layout; run.c's one query at a time needs n_keys of it.
  return q8::attend_queries_scratch(head_size, n_keys);
}

}  // namespace llama
