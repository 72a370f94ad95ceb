// hf_tensor_specs: LlamaForCausalLM's parameter names and the shapes
// config.json gives them (nn.Linear weights are [out_features, in_features]).
#include "llama/formats/hf_checkpoint.hpp"

namespace llama {

std::vector<HfTensorSpec> hf_tensor_specs(const HfConfig& c) {
  // Every factor is at most 2^31 - 1 (parse_hf_config), so no product overflows.
  const int64_t hidden = c.hidden_size, inter = c.intermediate_size;
  std::vector<HfTensorSpec> specs;
  specs.push_back({"model.embed_tokens.weight", HfRole::embed_tokens, -1, {c.vocab_size, hidden}});
  for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    specs.push_back({p + "self_attn.q_proj.weight", HfRole::q_proj, l, {c.q_dim(), hidden}});
    specs.push_back({p + "self_attn.k_proj.weight", HfRole::k_proj, l, {c.kv_dim(), hidden}});
    specs.push_back({p + "self_attn.v_proj.weight", HfRole::v_proj, l, {c.kv_dim(), hidden}});
    specs.push_back({p + "self_attn.o_proj.weight", HfRole::o_proj, l, {hidden, c.q_dim()}});
    specs.push_back({p + "mlp.gate_proj.weight", HfRole::gate_proj, l, {inter, hidden}});
    specs.push_back({p + "mlp.up_proj.weight", HfRole::up_proj, l, {inter, hidden}});
    specs.push_back({p + "mlp.down_proj.weight", HfRole::down_proj, l, {hidden, inter}});
    specs.push_back({p + "input_layernorm.weight", HfRole::input_norm, l, {hidden}});
    specs.push_back({p + "post_attention_layernorm.weight", HfRole::post_attn_norm, l, {hidden}});
  }
  specs.push_back({"model.norm.weight", HfRole::final_norm, -1, {hidden}});
  if (!c.tie_word_embeddings) {
    specs.push_back({"lm_head.weight", HfRole::lm_head, -1, {c.vocab_size, hidden}});
  }
  return specs;
}

}  // namespace llama
