// run.c's softmax and argmax over f32 values: the sampler's, and softmax is
// also run.c's attention's.
#pragma once

#include <cstdint>
#include <span>

namespace llama {

// In-place softmax in f32, as run.c computes it.
void softmax(std::span<float> x);
// First index of the largest value (run.c's argmax: a NaN never wins).
int32_t argmax(std::span<const float> x);

}  // namespace llama
