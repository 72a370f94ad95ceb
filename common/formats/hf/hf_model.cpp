// open_hf_model: a Hugging Face checkpoint's tensors as ModelWeights views and
// its configs as a Config.
#include "llama/formats/hf_model.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <sstream>
#include <vector>

#include "llama/error.hpp"

namespace llama {
namespace {

DType model_dtype(SafetensorsDtype d) {
  switch (d) {
    case SafetensorsDtype::F32:
      return DType::f32;
    case SafetensorsDtype::BF16:
      return DType::bf16;
    case SafetensorsDtype::F16:
      return DType::f16;
    default:
      break;
  }
  // HfCheckpoint::open refused every other dtype by name already.
  throw Error(std::string("safetensors dtype ") + to_string(d) + " has no model dtype");
}

RopeScaling rope_scaling(const HfRopeScaling& s) {
  RopeScaling out;
  out.factor = s.factor;
  out.low_freq_factor = s.low_freq_factor;
  out.high_freq_factor = s.high_freq_factor;
  switch (s.type) {
    case HfRopeType::none:
      out.type = RopeScalingType::none;
      break;
    case HfRopeType::linear:
      out.type = RopeScalingType::linear;
      break;
    case HfRopeType::llama3:
      out.type = RopeScalingType::llama3;
      out.original_max_position_embeddings = s.original_max_position_embeddings;
      break;
  }
  return out;
}

int32_t token_id(int64_t id) {
  // parse_hf_config checked 0 <= id < vocab_size; Config::validate bounds vocab_size.
  return static_cast<int32_t>(std::clamp<int64_t>(id, -1, INT32_MAX));
}

// The mapping (through the checkpoint) and any aligned copies.
struct Storage {
  std::shared_ptr<const SafetensorsModel> safetensors;
  std::vector<std::vector<float>> copies;  // raw bytes of misaligned tensors, 4-byte aligned
};

Tensor LayerWeights::*layer_member(HfRole role) {
  switch (role) {
    case HfRole::q_proj:
      return &LayerWeights::wq;
    case HfRole::k_proj:
      return &LayerWeights::wk;
    case HfRole::v_proj:
      return &LayerWeights::wv;
    case HfRole::o_proj:
      return &LayerWeights::wo;
    case HfRole::gate_proj:
      return &LayerWeights::w1;
    case HfRole::up_proj:
      return &LayerWeights::w3;
    case HfRole::down_proj:
      return &LayerWeights::w2;
    case HfRole::input_norm:
      return &LayerWeights::attention_norm;
    case HfRole::post_attn_norm:
      return &LayerWeights::ffn_norm;
    default:
      return nullptr;
  }
}

}  // namespace

Config hf_model_config(const HfConfig& hf, const std::string& source, int64_t context_cap) {
  Config c;
  c.dim = hf.hidden_size;
  c.hidden_dim = hf.intermediate_size;
  c.n_layers = hf.num_hidden_layers;
  c.n_heads = hf.num_attention_heads;
  c.n_kv_heads = hf.num_key_value_heads;
  c.vocab_size = hf.vocab_size;
  c.head_dim = hf.head_dim;
  c.norm_eps = hf.rms_norm_eps;
  c.rope_theta = hf.rope_theta;
  c.rope_scaling = rope_scaling(hf.rope_scaling);
  c.rope_layout = RopeLayout::halves;
  c.shared_classifier = hf.tie_word_embeddings;
  c.context_length = hf.max_position_embeddings;
  c.seq_len = context_cap > 0 ? std::min(hf.max_position_embeddings, context_cap)
                              : hf.max_position_embeddings;
  c.bos_id = hf.bos_token_id ? token_id(*hf.bos_token_id) : -1;
  c.eos_ids.clear();
  for (int64_t id : hf.eos_token_ids) c.eos_ids.push_back(token_id(id));
  c.validate(source);
  return c;
}

HfModel open_hf_model(const std::string& path, int64_t context_cap) {
  HfModel m{HfCheckpoint::open(path), {}, 0, 0};
  const HfCheckpoint& ck = m.checkpoint;
  Model& model = m.model;
  model.source = ck.paths().directory;
  model.config = hf_model_config(ck.config(), ck.paths().config, context_cap);

  auto storage = std::make_shared<Storage>();
  storage->safetensors = ck.safetensors_ptr();
  ModelWeights& w = model.weights;
  w.layers.resize(static_cast<size_t>(model.config.n_layers));
  for (const HfTensor& t : ck.tensors()) {
    const DType dtype = model_dtype(t.tensor->dtype);
    std::span<const std::byte> bytes = t.tensor->bytes;
    const auto align = static_cast<uintptr_t>(dtype_info(dtype).block_bytes);
    if (reinterpret_cast<uintptr_t>(bytes.data()) % align != 0) {
      // f32 storage is aligned for every float dtype.
      std::vector<float>& copy = storage->copies.emplace_back((bytes.size() + 3) / 4);
      std::memcpy(copy.data(), bytes.data(), bytes.size());
      bytes = std::as_bytes(std::span<const float>(copy)).first(bytes.size());
      ++m.copied_tensors;
      m.copied_bytes += static_cast<int64_t>(bytes.size());
    }
    Tensor view = Tensor::view(t.spec.name, dtype, t.spec.shape, bytes);
    switch (t.spec.role) {
      case HfRole::embed_tokens:
        w.token_embedding = std::move(view);
        break;
      case HfRole::final_norm:
        w.final_norm = std::move(view);
        break;
      case HfRole::lm_head:
        w.classifier = std::move(view);
        break;
      default:
        w.layers.at(static_cast<size_t>(t.spec.layer)).*layer_member(t.spec.role) = std::move(view);
    }
  }
  if (model.config.shared_classifier) w.classifier = w.token_embedding;
  w.storage = storage;
  validate_weights(w, model.config, ck.paths().weights);
  return m;
}

std::string HfModel::describe() const {
  const HfPaths& p = checkpoint.paths();
  std::ostringstream s;
  s << "checkpoint: " << p.directory << " (Hugging Face " << checkpoint.config().architecture
    << ", safetensors " << p.weights << ", " << checkpoint.safetensors().files().size()
    << " file(s))\n";
  s << "config.json: " << llama::describe(checkpoint.config()) << "\n";
  if (!checkpoint.config().defaulted.empty()) {
    s << "defaulted (transformers' defaults):";
    for (const std::string& f : checkpoint.config().defaulted) s << " " << f;
    s << "\n";
  }
  s << "model: " << model.config.to_string() << "\n";
  s << "weights: " << checkpoint.tensors().size() << " tensors, " << checkpoint.weight_bytes()
    << " bytes read in place (mmap), q/k rows in rotate_half order (rope layout halves, no copy), "
    << (model.config.shared_classifier ? "classifier tied to the embedding"
                                       : "separate lm_head classifier")
    << "\n";
  if (copied_tensors > 0) {
    s << "copied at open: " << copied_tensors << " tensors (" << copied_bytes
      << " bytes) not aligned for their dtype in the file\n";
  }
  for (const std::string& name : checkpoint.ignored()) s << "ignored: " << name << "\n";
  return s.str();
}

}  // namespace llama
