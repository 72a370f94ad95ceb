// A Hugging Face checkpoint: a directory holding config.json,
// generation_config.json (optional), model.safetensors or the shards of
// model.safetensors.index.json, and its tokenizer.json. Opening it reads the
// configs, maps the safetensors and binds every tensor LlamaForCausalLM needs
// to its name, checking its shape against config.json and its dtype (F32,
// BF16, F16), all before any weight is read.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "llama/formats/hf_config.hpp"
#include "llama/formats/safetensors.hpp"

namespace llama {

// What a tensor is in LlamaForCausalLM (model.layers.{i}. prefix for layered ones).
enum class HfRole {
  embed_tokens,    // model.embed_tokens.weight [vocab, hidden]
  q_proj,          // self_attn.q_proj.weight [heads * head_dim, hidden]
  k_proj,          // self_attn.k_proj.weight [kv_heads * head_dim, hidden]
  v_proj,          // self_attn.v_proj.weight [kv_heads * head_dim, hidden]
  o_proj,          // self_attn.o_proj.weight [hidden, heads * head_dim]
  gate_proj,       // mlp.gate_proj.weight [intermediate, hidden]
  up_proj,         // mlp.up_proj.weight [intermediate, hidden]
  down_proj,       // mlp.down_proj.weight [hidden, intermediate]
  input_norm,      // input_layernorm.weight [hidden]
  post_attn_norm,  // post_attention_layernorm.weight [hidden]
  final_norm,      // model.norm.weight [hidden]
  lm_head,         // lm_head.weight [vocab, hidden], absent when tied
};

struct HfTensorSpec {
  std::string name;
  HfRole role = HfRole::embed_tokens;
  int64_t layer = -1;  // -1 for the unlayered tensors
  std::vector<int64_t> shape;
};

// Every tensor `config` implies, in the order embed, layers (q k v o gate up
// down and both norms each), final norm, lm_head (when untied).
std::vector<HfTensorSpec> hf_tensor_specs(const HfConfig& config);

struct HfTensor {
  HfTensorSpec spec;
  const SafetensorsTensor* tensor = nullptr;  // its dtype (F32, BF16 or F16) and bytes
  const SafetensorsFile* file = nullptr;
};

// Where the files of a checkpoint are, from `-c PATH` (the directory, its
// model.safetensors or its model.safetensors.index.json).
struct HfPaths {
  std::string directory;
  std::string config;             // directory/config.json
  std::string generation_config;  // directory/generation_config.json, "" if absent
  std::string weights;            // the .safetensors file or the index
  std::string tokenizer;          // directory/tokenizer.json, "" if absent
  std::string tokenizer_config;   // directory/tokenizer_config.json, "" if absent
};
// True when `path` is a directory with a config.json, a .safetensors file or
// a safetensors index: what HfCheckpoint::open takes.
bool looks_like_hf_checkpoint(const std::string& path);
// Throws Error naming `path` when it is none of the three, or when the
// directory has no config.json or no safetensors (naming what it has instead).
HfPaths find_hf_files(const std::string& path);

class HfCheckpoint {
 public:
  // Throws Error naming the file at fault: a config field, a missing,
  // duplicate, unexpected or mis-shaped tensor, an unsupported dtype.
  static HfCheckpoint open(const std::string& path);
  // What open does once the files are read: binds `config`'s tensors to those of
  // `safetensors` (`paths` names the files in errors). No allocation grows with a
  // size of `config` before that size is checked against the tensors.
  static HfCheckpoint bind(HfPaths paths, HfConfig config,
                           std::shared_ptr<const SafetensorsModel> safetensors);

  const HfPaths& paths() const { return paths_; }
  const HfConfig& config() const { return config_; }
  const SafetensorsModel& safetensors() const { return *safetensors_; }
  // Shared, for views that outlive the checkpoint object (the mapping stays).
  const std::shared_ptr<const SafetensorsModel>& safetensors_ptr() const { return safetensors_; }
  // hf_tensor_specs order, each bound to its safetensors tensor.
  const std::vector<HfTensor>& tensors() const { return tensors_; }
  // The tensor for (role, layer); throws Error if there is none (lm_head when tied).
  const HfTensor& tensor(HfRole role, int64_t layer = -1) const;
  // Tensors in the files that the model does not use (lm_head.weight when
  // tied, rotary_emb.inv_freq buffers), for --verify-checkpoint.
  const std::vector<std::string>& ignored() const { return ignored_; }
  // Bytes of the tensors a forward pass reads, as stored.
  int64_t weight_bytes() const;

 private:
  HfPaths paths_;
  HfConfig config_;
  std::shared_ptr<const SafetensorsModel> safetensors_;
  std::vector<HfTensor> tensors_;
  std::vector<std::string> ignored_;
};

}  // namespace llama
