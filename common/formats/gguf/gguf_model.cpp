// A llama GGUF file as the core's Model: Config from the metadata, every
// tensor a typed view into the mapping (block types read in place).
#include "llama/formats/gguf_model.hpp"

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

#include "llama/checked_math.hpp"
#include "llama/error.hpp"
#include "llama/formats/gguf_llama.hpp"
#include "llama/formats/gguf_tokenizer.hpp"
#include "llama/formats/gguf_types.hpp"

namespace llama::gguf {
namespace {

DType dtype_of(const Tensor& t) {
  switch (static_cast<TensorType>(t.type)) {
    case TensorType::F32:
      return DType::f32;
    case TensorType::F16:
      return DType::f16;
    case TensorType::BF16:
      return DType::bf16;
    case TensorType::Q8_0:
      return DType::block_q8_0;
    case TensorType::Q4_0:
      return DType::q4_0;
    case TensorType::Q4_K:
      return DType::q4_k;
    case TensorType::Q6_K:
      return DType::q6_k;
    case TensorType::Q4_1:
      return DType::q4_1;
    case TensorType::Q5_0:
      return DType::q5_0;
    case TensorType::Q5_1:
      return DType::q5_1;
    case TensorType::Q5_K:
      return DType::q5_k;
    case TensorType::Q3_K:
      return DType::q3_k;
    case TensorType::Q2_K:
      return DType::q2_k;
    default:
      break;  // read_llama refused every other type
  }
  throw Error("tensor " + t.name + ": " + type_name(t.type) + " has no core dtype");
}

llama::Tensor view(const Tensor* t) {
  return llama::Tensor::view(t->name, dtype_of(*t), t->shape, t->data);
}

// A token id key: absent -> fallback; outside the vocabulary -> refused.
int32_t token_id(const File& f, const char* key, int32_t fallback, int64_t vocab) {
  const std::optional<uint64_t> v = f.optional_uint(key);
  if (!v) return fallback;
  if (*v >= static_cast<uint64_t>(vocab)) {
    throw Error(f.source() + ": " + key + " " + std::to_string(*v) +
                " is outside the vocabulary of " + std::to_string(vocab) + " tokens");
  }
  return static_cast<int32_t>(*v);
}

void fill_special_ids(const File& f, Config& c) {
  // llama.cpp's defaults for a `llama` vocabulary without the keys.
  const bool spm = f.optional_string("tokenizer.ggml.model").value_or("") == "llama";
  const int32_t bos_default = spm && c.vocab_size > 1 ? 1 : -1;
  const int32_t eos_default = spm && c.vocab_size > 2 ? 2 : -1;
  c.bos_id = token_id(f, "tokenizer.ggml.bos_token_id", bos_default, c.vocab_size);
  c.eos_ids.clear();
  const int32_t eos = token_id(f, "tokenizer.ggml.eos_token_id", eos_default, c.vocab_size);
  if (eos >= 0) c.eos_ids.push_back(eos);
  // Llama 3's <|eot_id|> ends a chat turn: llama.cpp stops at it too.
  const int32_t eot = token_id(f, "tokenizer.ggml.eot_token_id", -1, c.vocab_size);
  if (eot >= 0 && eot != eos) c.eos_ids.push_back(eot);
}

}  // namespace

Model to_model(const File& f) {
  const LlamaFile m = read_llama(f);
  Model model;
  model.source = f.source();
  // llama.cpp's default cache (-ctk/-ctv f16): the reference streams were made with it.
  model.kv_cache = KvDType::f16;
  model.kv_cache_why = "the GGUF default (llama.cpp's -ctk/-ctv f16)";
  Config& c = model.config;
  c.dim = m.dim;
  c.hidden_dim = m.hidden_dim;
  c.n_layers = m.n_layers;
  c.n_heads = m.n_heads;
  c.n_kv_heads = m.n_kv_heads;
  c.vocab_size = m.vocab_size;
  c.head_dim = m.head_dim;
  c.context_length = m.context_length;
  c.seq_len = std::min(m.context_length, kDefaultContext);
  c.norm_eps = m.norm_eps;
  c.rope_theta = m.rope_theta;
  if (m.rope_linear_factor != 1) {
    c.rope_scaling.type = RopeScalingType::linear;
    c.rope_scaling.factor = m.rope_linear_factor;
  }
  // llama.cpp's converter undoes Hugging Face's q/k permutation, so llama
  // tensors rotate interleaved pairs (checked against llama.cpp's streams in
  // tests/test_gguf_parity.cpp).
  c.rope_layout = RopeLayout::interleaved;
  // ...and llama.cpp's angles, one product at a time (config.hpp).
  c.rope_angles = RopeAngles::ggml;
  c.shared_classifier = m.output == nullptr;
  fill_special_ids(f, c);
  c.validate(f.source());

  ModelWeights& w = model.weights;
  w.token_embedding = view(m.token_embd);
  w.final_norm = view(m.output_norm);
  w.classifier = m.output != nullptr ? view(m.output) : w.token_embedding;
  w.layers.resize(m.layers.size());
  for (size_t l = 0; l < m.layers.size(); ++l) {
    const LlamaLayer& in = m.layers[l];
    LayerWeights& out = w.layers[l];
    out.attention_norm = view(in.attn_norm);
    out.wq = view(in.wq);
    out.wk = view(in.wk);
    out.wv = view(in.wv);
    out.wo = view(in.wo);
    out.ffn_norm = view(in.ffn_norm);
    out.w1 = view(in.w1);
    out.w2 = view(in.w2);
    out.w3 = view(in.w3);
  }
  w.storage = f.storage();
  validate_weights(w, c, f.source());
  return model;
}

GgufModel open_model(const std::string& path) {
  const File f = File::open(path);
  GgufModel g;
  g.version = f.version();
  g.alignment = f.alignment();
  g.file_size = f.file_size();
  g.name = std::string(f.optional_string("general.name").value_or(""));
  g.model = to_model(f);
  if (has_tokenizer(f)) {
    g.tokenizer = open_tokenizer(f, g.model.config.vocab_size);
    if (const auto t = f.optional_string("tokenizer.chat_template")) {
      g.chat_template.source = std::string(*t);
      g.chat_template.origin = path + ": tokenizer.chat_template";
      const Config& c = g.model.config;
      if (c.bos_id >= 0) g.chat_template.bos_token = std::string(g.tokenizer->piece(c.bos_id));
      if (!c.eos_ids.empty()) {
        g.chat_template.eos_token = std::string(g.tokenizer->piece(c.eos_ids.front()));
      }
    }
  }
  return g;
}

const char* gguf_type_name(DType dtype) {
  switch (dtype) {
    case DType::f32:
      return "F32";
    case DType::f16:
      return "F16";
    case DType::bf16:
      return "BF16";
    case DType::block_q8_0:
      return "Q8_0";
    case DType::q4_0:
      return "Q4_0";
    case DType::q4_k:
      return "Q4_K";
    case DType::q6_k:
      return "Q6_K";
    case DType::q4_1:
      return "Q4_1";
    case DType::q5_0:
      return "Q5_0";
    case DType::q5_1:
      return "Q5_1";
    case DType::q5_k:
      return "Q5_K";
    case DType::q3_k:
      return "Q3_K";
    case DType::q2_k:
      return "Q2_K";
    case DType::q8_0:
      break;
  }
  return to_string(dtype);  // not a GGUF type: the core's name
}

std::string describe(const GgufModel& g) {
  const Model& m = g.model;
  std::ostringstream s;
  s << "gguf: " << m.source << " (GGUF v" << g.version << ", alignment " << g.alignment << ", "
    << g.file_size << " bytes)";
  if (!g.name.empty()) s << ", general.name \"" << g.name << "\"";
  s << "\nconfig: " << m.config.to_string() << "\n";
  std::map<std::string, std::pair<int64_t, int64_t>> by_type;  // name -> tensors, bytes
  int64_t tensors = 0;
  m.weights.for_each([&](const llama::Tensor& t) {
    auto& [n, bytes] = by_type[gguf_type_name(t.dtype)];
    ++n;
    bytes += static_cast<int64_t>(t.data.size());
    ++tensors;
  });
  s << "tensors: " << tensors << " (";
  bool first = true;
  for (const auto& [type, count] : by_type) {
    s << (first ? "" : ", ") << count.first << " " << type << " " << count.second << " bytes";
    first = false;
  }
  s << (m.weights.tied() ? "), classifier tied to token_embd\n" : ")\n");
  s << "tokenizer: "
    << (g.tokenizer ? g.tokenizer->description() + " (" +
                          std::to_string(g.tokenizer->vocab_size()) + " tokens, embedded)"
                    : std::string("none in the file (give one with -k)"))
    << "\n";
  s << "chat template: "
    << (g.chat_template.source.empty()
            ? std::string("none")
            : "tokenizer.chat_template (" + std::to_string(g.chat_template.source.size()) +
                  " bytes)")
    << "\n";
  return s.str();
}

bool is_gguf(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  return in.read(magic, 4) && std::string_view(magic, 4) == "GGUF";
}

}  // namespace llama::gguf
