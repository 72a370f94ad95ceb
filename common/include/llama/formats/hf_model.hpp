// A Hugging Face checkpoint (hf_checkpoint.hpp) as the Model every backend
// runs: the Config from config.json and generation_config.json, and the
// weights as typed views of the safetensors mapping in their stored dtype
// (f32, bf16, f16), q/k rows in place in rotate_half order (Config::rope_layout
// halves: the backends pair element i with i + head_dim / 2). A tensor whose
// bytes are not aligned for its dtype (possible in a hand-written file) is the
// one copy, counted in `copied_bytes`.
#pragma once

#include <cstdint>
#include <string>

#include "llama/config.hpp"
#include "llama/formats/hf_checkpoint.hpp"
#include "llama/model.hpp"

namespace llama {

// Positions of the KV cache when the caller sets none: the model's context,
// capped, so a 128K-context model does not ask for gigabytes it may not use.
inline constexpr int64_t kDefaultHfContextCap = 4096;

// config.json's model as a Config: seq_len = min(max_position_embeddings,
// `context_cap`), context_length = max_position_embeddings, rope_layout
// halves. Throws Error naming `source` when the Config does not validate.
Config hf_model_config(const HfConfig& hf, const std::string& source,
                       int64_t context_cap = kDefaultHfContextCap);

struct HfModel {
  HfCheckpoint checkpoint;
  Model model;                 // weights: views of the mapping (storage keeps it alive)
  int64_t copied_tensors = 0;  // misaligned tensors copied at open
  int64_t copied_bytes = 0;

  // Lines for --verify-checkpoint / --explain: the files, the config, then
  // one line per tensor (HF name, dtype, shape) and what was copied.
  std::string describe() const;
};

// Opens `path` (a directory, its model.safetensors or its index). Throws
// Error naming the file at fault.
HfModel open_hf_model(const std::string& path, int64_t context_cap = kDefaultHfContextCap);

}  // namespace llama
