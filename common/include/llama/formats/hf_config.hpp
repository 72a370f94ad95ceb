// A Hugging Face checkpoint's config.json (LlamaForCausalLM, or
// MistralForCausalLM without a sliding window) and generation_config.json, read
// with transformers' defaults for what they leave out. Anything that would
// change the forward pass beyond what the project runs (biases, another
// activation, another RoPE scaling, a sliding window, quantization) is refused
// with one line naming the field and its value.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace llama {

enum class HfRopeType { none, linear, llama3 };
const char* to_string(HfRopeType type);  // "none", "linear", "llama3"

struct HfRopeScaling {
  HfRopeType type = HfRopeType::none;
  double factor = 1.0;                              // linear and llama3
  double low_freq_factor = 1.0;                     // llama3
  double high_freq_factor = 4.0;                    // llama3
  int64_t original_max_position_embeddings = 8192;  // llama3
};

struct HfConfig {
  std::string architecture;  // "LlamaForCausalLM" or "MistralForCausalLM"
  std::string model_type;    // "llama" or "mistral"
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;
  int64_t num_hidden_layers = 0;
  int64_t num_attention_heads = 0;
  int64_t num_key_value_heads = 0;  // default: num_attention_heads
  int64_t head_dim = 0;             // default: hidden_size / num_attention_heads
  int64_t vocab_size = 0;
  int64_t max_position_embeddings = 0;  // default: 2048 (llama), 131072 (mistral)
  double rms_norm_eps = 1e-6;
  double rope_theta = 10000.0;
  HfRopeScaling rope_scaling;
  bool tie_word_embeddings = false;
  std::optional<int64_t> bos_token_id;  // default 1; null: none
  std::vector<int64_t> eos_token_ids;   // default [2]; an int or a list in the file
  std::string torch_dtype;              // as stated, informative ("" if absent)
  // Fields left out of config.json and given transformers' default, in order.
  std::vector<std::string> defaulted;
  // Where bos/eos came from: "config.json" or "generation_config.json".
  std::string special_ids_source = "config.json";

  int64_t q_dim() const { return num_attention_heads * head_dim; }   // query width
  int64_t kv_dim() const { return num_key_value_heads * head_dim; }  // key/value width
};

// Parses config.json's text; throws Error "<source>: ..." naming the field.
// Required: hidden_size, intermediate_size, num_hidden_layers,
// num_attention_heads, vocab_size, and architectures or model_type.
HfConfig parse_hf_config(std::string_view json, const std::string& source);

// generation_config.json: its bos_token_id and eos_token_id, when present and
// not null, replace config.json's (transformers' generate uses them).
void apply_generation_config(HfConfig& config, std::string_view json, const std::string& source);

// One line for --explain and describe(): shape, heads, rope, ids.
std::string describe(const HfConfig& config);

}  // namespace llama
