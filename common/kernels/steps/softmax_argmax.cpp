// run.c's softmax and argmax (softmax_argmax.hpp).
#include "llama/kernels/steps/softmax_argmax.hpp"

#include <algorithm>
#include <cmath>

#include "kernels/steps/argmax_kernels.hpp"
#include "llama/kernels/dispatch/cpu_features.hpp"
#include "llama/kernels/x86/simd_target.hpp"

namespace llama {

void softmax(std::span<float> x) {
  if (x.empty()) return;
  float max_val = x[0];
  for (float v : x) max_val = std::max(max_val, v);
  float sum = 0.0f;
  for (float& v : x) {
    v = std::exp(v - max_val);
    sum += v;
  }
  for (float& v : x) v /= sum;
}

int32_t argmax(std::span<const float> x) {
#if LLAMA_HAVE_X86_TARGETS
  if (simd_level() == SimdLevel::avx512) return argmax_avx512(x.data(), x.size());
#endif
  return argmax_portable(x.data(), x.size());
}

}  // namespace llama
