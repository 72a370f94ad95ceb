// Private to the core: a llama2.c file's tensor table (layered tensors whole,
// as the file stores them) as per-layer typed views (llama/weights.hpp).
#pragma once

#include <memory>
#include <vector>

#include "llama/formats/llama2c_checkpoint.hpp"

namespace llama {

// Views into the same memory, no copy: f32 tensors sliced per layer, Q8_0
// tensors one view per layer. Layer l of tensor "wq" is named "wq[l]".
ModelWeights llama2c_weights(const std::vector<TensorInfo>& tensors, const Config& config,
                             std::shared_ptr<const void> storage);

}  // namespace llama
