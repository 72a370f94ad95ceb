// HF <-> llama2.c: model_to_llama2c builds export.py's version 1 bytes from an HF
// (or GGUF) model; write_hf_directory writes what transformers' converter would from a
// llama2.c file.
#include "llama/formats/hf_llama2c.hpp"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "llama/checked_math.hpp"
#include "llama/error.hpp"
#include "llama/formats/hf_tokenizer_export.hpp"
#include "llama/formats/rotary_rows.hpp"
#include "llama/formats/safetensors_writer.hpp"
#include "llama/kernels/numbers/dequantize.hpp"
#include "llama/kernels/numbers/half.hpp"
#include "llama/memory_budget.hpp"
#include "llama/tokenizers/llama2c_tokenizer.hpp"

namespace llama {
namespace {

namespace fs = std::filesystem;

// A tensor's values widened exactly to f32, q/k rows permuted from one order
// to the other when `heads` > 0.
std::vector<float> f32_values(const Tensor& t, int64_t heads, int64_t head_dim,
                              bool to_interleaved) {
  std::vector<float> v(static_cast<size_t>(t.elements()));  // f32 [t.shape]
  dequantize(t, v);
  if (heads == 0) return v;
  std::vector<float> out(v.size());
  const int64_t row_bytes = t.cols() * 4;
  const auto src = std::as_bytes(std::span<const float>(v));
  const auto dst = std::as_writable_bytes(std::span<float>(out));
  if (to_interleaved) {
    rotate_half_to_interleaved(src, dst, heads, head_dim, row_bytes);
  } else {
    interleaved_to_rotate_half(src, dst, heads, head_dim, row_bytes);
  }
  return out;
}

void require_llama2c_expressible(const Config& c, const std::string& destination) {
  std::string why;
  if (c.head_dim * c.n_heads != c.dim) {
    why = "head_dim " + std::to_string(c.head_dim) + " is not dim / n_heads (" +
          std::to_string(c.dim) + " / " + std::to_string(c.n_heads) + ")";
  } else if (c.rope_scaling.type != RopeScalingType::none) {
    why = std::string("rope_scaling ") + to_string(c.rope_scaling.type) + " is not none";
  } else if (c.rope_theta != 10000.0) {
    why = "rope_theta " + std::to_string(c.rope_theta) + " is not 10000";
  } else if (static_cast<float>(c.norm_eps) != 1e-5f) {  // run.c's 1e-5f; GGUF stores f32
    why = "rms_norm_eps is not 1e-5";
  } else if (c.context_length > INT32_MAX || c.vocab_size > INT32_MAX || c.dim > INT32_MAX ||
             c.hidden_dim > INT32_MAX) {
    why = "a size does not fit llama2.c's 32-bit header";
  }
  if (!why.empty()) {
    throw Error(destination + ": a llama2.c checkpoint cannot hold this model: " + why);
  }
}

void append_floats(std::vector<float>& out, std::span<const float> v) {
  out.insert(out.end(), v.begin(), v.end());
}

}  // namespace

Checkpoint hf_to_llama2c(const HfModel& hf, const std::string& destination) {
  return model_to_llama2c(hf.model, destination);
}

Checkpoint model_to_llama2c(const Model& model, const std::string& destination) {
  const Config& c = model.config;
  require_llama2c_expressible(c, destination);
  const ModelWeights& w = model.weights;
  // llama2.c's q/k rows are interleaved: HF's rotate_half rows are permuted back.
  const bool halves = c.rope_layout == RopeLayout::halves;
  const int64_t floats = c.parameter_count();
  require_memory(checked_add(checked_mul(floats, int64_t{4}, destination), 256, destination),
                 "the f32 llama2.c copy of the model", available_memory(), destination);

  // export.py's version 1: a 256-byte header, then every tensor in f32.
  auto storage = std::make_shared<std::vector<float>>();  // f32: header (64 floats) + weights
  std::vector<float>& buf = *storage;
  buf.reserve(static_cast<size_t>(64 + floats));
  buf.resize(64, 0.0f);
  const int32_t header[9] = {static_cast<int32_t>(Checkpoint::kAk42Magic),
                             1,
                             static_cast<int32_t>(c.dim),
                             static_cast<int32_t>(c.hidden_dim),
                             static_cast<int32_t>(c.n_layers),
                             static_cast<int32_t>(c.n_heads),
                             static_cast<int32_t>(c.n_kv_heads),
                             static_cast<int32_t>(c.vocab_size),
                             static_cast<int32_t>(c.context_length)};
  std::memcpy(buf.data(), header, sizeof header);
  const uint8_t shared = c.shared_classifier ? 1 : 0;
  std::memcpy(reinterpret_cast<std::byte*>(buf.data()) + sizeof header, &shared, 1);

  const auto each_layer = [&](Tensor LayerWeights::*m, int64_t heads) {
    for (const LayerWeights& l : w.layers)
      append_floats(buf, f32_values(l.*m, halves ? heads : 0, c.head_dim, true));
  };
  each_layer(&LayerWeights::attention_norm, 0);
  each_layer(&LayerWeights::ffn_norm, 0);
  append_floats(buf, f32_values(w.final_norm, 0, 0, true));
  append_floats(buf, f32_values(w.token_embedding, 0, 0, true));
  each_layer(&LayerWeights::wq, c.n_heads);  // export.py's permute_reverse
  each_layer(&LayerWeights::wk, c.n_kv_heads);
  each_layer(&LayerWeights::wv, 0);
  each_layer(&LayerWeights::wo, 0);
  each_layer(&LayerWeights::w1, 0);
  each_layer(&LayerWeights::w2, 0);
  each_layer(&LayerWeights::w3, 0);
  if (!c.shared_classifier) append_floats(buf, f32_values(w.classifier, 0, 0, true));
  const auto bytes = std::as_bytes(std::span<const float>(buf));
  return Checkpoint::parse(bytes, model.source + " (as llama2.c version 1)", storage);
}

HfDirectoryReport write_hf_directory(const Checkpoint& in, const Llama2cTokenizer* tokenizer,
                                     SafetensorsDtype dtype, const std::string& dir) {
  if (dtype != SafetensorsDtype::F32 && dtype != SafetensorsDtype::BF16 &&
      dtype != SafetensorsDtype::F16) {
    throw Error(dir + ": weights can be written as F32, BF16 or F16, not " + to_string(dtype));
  }
  const Config& c = in.config();
  const ModelWeights& w = in.model().weights;
  require_memory(checked_mul(c.parameter_count(), int64_t{8}, dir),
                 "the f32 and " + std::string(to_string(dtype)) + " copies of the weights",
                 available_memory(), dir);
  HfDirectoryReport report;
  const auto write = [&](const std::string& name, const std::string& text) {
    const std::string path = (fs::path(dir) / name).string();
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f << text;
    f.close();
    if (!f) throw Error(path + ": write failed");
    report.files.push_back(path);
    report.bytes += static_cast<int64_t>(text.size());
  };

  const char* torch_dtype = dtype == SafetensorsDtype::F32    ? "float32"
                            : dtype == SafetensorsDtype::BF16 ? "bfloat16"
                                                              : "float16";
  const nlohmann::ordered_json config = {{"architectures", {"LlamaForCausalLM"}},
                                         {"model_type", "llama"},
                                         {"hidden_act", "silu"},
                                         {"hidden_size", c.dim},
                                         {"intermediate_size", c.hidden_dim},
                                         {"num_hidden_layers", c.n_layers},
                                         {"num_attention_heads", c.n_heads},
                                         {"num_key_value_heads", c.n_kv_heads},
                                         {"head_dim", c.head_dim},
                                         {"rms_norm_eps", c.norm_eps},
                                         {"rope_theta", c.rope_theta},
                                         {"rope_scaling", nullptr},
                                         {"tie_word_embeddings", c.shared_classifier},
                                         {"vocab_size", c.vocab_size},
                                         {"max_position_embeddings", c.seq_len},
                                         {"bos_token_id", 1},
                                         {"eos_token_id", {1, 2}},
                                         {"attention_bias", false},
                                         {"mlp_bias", false},
                                         {"torch_dtype", torch_dtype}};
  write("config.json", config.dump(1));
  write("generation_config.json",
        nlohmann::ordered_json{{"bos_token_id", 1}, {"eos_token_id", {1, 2}}}.dump(1));

  // The tensors in transformers' state_dict order, each converted once.
  std::vector<std::vector<std::byte>> data;
  std::vector<SafetensorsOutput> tensors;
  const auto add = [&](std::string name, const Tensor& t, int64_t heads) {
    const std::vector<float> v = f32_values(t, heads, c.head_dim, false);
    std::vector<std::byte>& bytes = data.emplace_back(v.size() * element_bytes(dtype));
    if (dtype == SafetensorsDtype::F32) {
      std::memcpy(bytes.data(), v.data(), bytes.size());
    } else {
      for (size_t i = 0; i < v.size(); ++i) {
        const uint16_t h = dtype == SafetensorsDtype::BF16 ? f32_to_bf16(v[i]) : f32_to_f16(v[i]);
        std::memcpy(bytes.data() + 2 * i, &h, 2);
      }
    }
    tensors.push_back({std::move(name), dtype, t.shape, bytes});
  };
  data.reserve(static_cast<size_t>(3 + 9 * c.n_layers));  // the spans above stay valid
  add("model.embed_tokens.weight", w.token_embedding, 0);
  for (int64_t l = 0; l < c.n_layers; ++l) {
    const LayerWeights& lw = w.layers[static_cast<size_t>(l)];
    const std::string p = "model.layers." + std::to_string(l) + ".";
    add(p + "input_layernorm.weight", lw.attention_norm, 0);
    add(p + "self_attn.q_proj.weight", lw.wq, c.n_heads);  // transformers' permute
    add(p + "self_attn.k_proj.weight", lw.wk, c.n_kv_heads);
    add(p + "self_attn.v_proj.weight", lw.wv, 0);
    add(p + "self_attn.o_proj.weight", lw.wo, 0);
    add(p + "post_attention_layernorm.weight", lw.ffn_norm, 0);
    add(p + "mlp.gate_proj.weight", lw.w1, 0);
    add(p + "mlp.up_proj.weight", lw.w3, 0);
    add(p + "mlp.down_proj.weight", lw.w2, 0);
  }
  add("model.norm.weight", w.final_norm, 0);
  if (!c.shared_classifier) add("lm_head.weight", w.classifier, 0);
  {
    const std::string path = (fs::path(dir) / "model.safetensors").string();
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    write_safetensors(f, tensors, {{"format", "pt"}}, path);
    f.close();
    if (!f) throw Error(path + ": write failed");
    report.files.push_back(path);
    report.bytes += static_cast<int64_t>(fs::file_size(path));
  }
  if (tokenizer != nullptr) {
    std::vector<std::string> pieces;
    std::vector<float> scores;
    for (int32_t id = 0; id < tokenizer->vocab_size(); ++id) {
      pieces.emplace_back(tokenizer->piece(id));
      scores.push_back(tokenizer->score(id));
    }
    write("tokenizer.json", sentencepiece_tokenizer_json(pieces, scores, tokenizer->description()));
    write("tokenizer_config.json", sentencepiece_tokenizer_config_json(c.seq_len));
  }
  return report;
}

}  // namespace llama
