// In-memory models for the conformance suite: any Config (head_dim independent of dim, rope
// scaling, rotation layout) with seeded random f32 weights, without a file
// format that could hold it; and the same model with its q/k rows permuted
// for Hugging Face's rotate_half, as HF's converter permutes them.
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

struct NamedConfig {
  std::string name;
  Config config;
};
// What llama2.c files cannot express: n_heads x head_dim above and below dim,
// grouped-query heads, theta 500000 with llama3 scaling, linear scaling, another eps.
std::vector<NamedConfig> variant_configs();

}  // namespace llama::conformance
