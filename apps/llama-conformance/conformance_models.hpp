// In-memory models for the conformance suite: any Config (head_dim independent of dim, rope
// scaling, rotation layout) with seeded random f32 weights, without a file
// format that could hold it; the same model with its q/k rows permuted for
// Hugging Face's rotate_half; and the same model in another dtype.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "llama/model.hpp"

namespace llama::conformance {

// A model of `config` (validated here) with weights uniform in [-0.5, 0.5)
// drawn from `seed`; `name` becomes Model::source. The weights own their memory.
Model random_model(const Config& config, uint64_t seed, const std::string& name);

// The model with every head's rows of wq and wk reordered from interleaved
// pairs (2i, 2i + 1) to halves (i, i + head_dim / 2) and rope_layout halves:
// the same function of the tokens, computed with the elements in another order.
Model with_halves_layout(const Model& interleaved);

// The model with its matrices (embedding and classifier included) in `dtype`:
// bf16 and f16 rounded to nearest even, q8_0 quantized as export.py does in
// groups of `group_size`; `norms_too` puts the RMSNorm gains in bf16/f16 as
// well (HF checkpoints store them so). Tensors are views of new memory.
Model with_dtype(const Model& model, DType dtype, int64_t group_size = 0, bool norms_too = false);

// The f32 model of exactly the values `model` holds (each tensor dequantized):
// what a backend computes on bf16/f16 weights widened exactly.
Model widened_to_f32(const Model& model);

struct NamedConfig {
  std::string name;
  Config config;
};
// What llama2.c files cannot express: n_heads x head_dim above and below dim,
// grouped-query heads, theta 500000 with llama3 scaling, linear scaling, another eps.
std::vector<NamedConfig> variant_configs();

}  // namespace llama::conformance
