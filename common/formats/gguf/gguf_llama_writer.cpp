// GGUF llama writer: llama.cpp's keys (convert-llama2c-to-ggml and
// llama-quantize at commit c392e5094) and each tensor encoded as it is written.
#include "llama/formats/gguf_llama_writer.hpp"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>

#include "llama/error.hpp"
#include "llama/formats/gguf_writer.hpp"
#include "llama/kernels/numbers/gguf_blocks.hpp"
#include "llama/kernels/numbers/half.hpp"

namespace llama::gguf {
namespace {

using Bytes = std::vector<std::byte>;

template <typename T>
Bytes as_bytes(const std::vector<T>& v) {
  Bytes b(v.size() * sizeof(T));
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

// llama_ftype of a whole file (general.file_type).
uint32_t file_type(OutType t) {
  switch (t) {
    case OutType::f16:
      return 1;  // LLAMA_FTYPE_MOSTLY_F16
    case OutType::q8_0:
      return 7;  // LLAMA_FTYPE_MOSTLY_Q8_0
    case OutType::q4_0:
      return 2;  // LLAMA_FTYPE_MOSTLY_Q4_0
    default:
      return 0;  // LLAMA_FTYPE_ALL_F32
  }
}

TensorType tensor_type(OutType t) {
  switch (t) {
    case OutType::f16:
      return TensorType::F16;
    case OutType::q8_0:
      return TensorType::Q8_0;
    case OutType::q4_0:
      return TensorType::Q4_0;
    default:
      return TensorType::F32;
  }
}

// `x` encoded as `type`; *max_error the largest |decoded - x|.
Bytes encode(const std::vector<float>& x, TensorType type, float* max_error) {
  std::vector<float> back(x.size());
  Bytes out;
  switch (type) {
    case TensorType::F16: {
      std::vector<uint16_t> h(x.size());
      for (size_t i = 0; i < x.size(); ++i) {
        h[i] = f32_to_f16(x[i]);
        back[i] = f16_to_f32(h[i]);
      }
      out = as_bytes(h);
      break;
    }
    case TensorType::Q8_0: {
      std::vector<BlockQ8_0> b(x.size() / kQK);
      quantize_q8_0(x, b);
      dequantize_q8_0(b, back);
      out = as_bytes(b);
      break;
    }
    case TensorType::Q4_0: {
      std::vector<BlockQ4_0> b(x.size() / kQK);
      quantize_q4_0(x, b);
      dequantize_q4_0(b, back);
      out = as_bytes(b);
      break;
    }
    default:
      back = x;
      out = as_bytes(x);
  }
  float err = 0;
  for (size_t i = 0; i < x.size(); ++i) err = std::max(err, std::fabs(back[i] - x[i]));
  *max_error = err;
  return out;
}

void set_vocabulary(Writer& w, const Vocabulary& v, const std::string& destination) {
  const size_t n = v.tokens.size();
  auto check = [&](size_t got, const char* what) {
    if (got != n) {
      throw Error(destination + ": vocabulary has " + std::to_string(n) + " tokens but " +
                  std::to_string(got) + " " + what);
    }
  };
  w.set_string("tokenizer.ggml.model", v.model);
  w.set_strings("tokenizer.ggml.tokens", v.tokens);
  if (!v.scores.empty() || v.model == "llama") {
    check(v.scores.size(), "scores");
    w.set_f32s("tokenizer.ggml.scores", v.scores);
  }
  if (!v.types.empty()) {
    check(v.types.size(), "token types");
    w.set_i32s("tokenizer.ggml.token_type", v.types);
  }
  if (v.model == "gpt2") {
    w.set_strings("tokenizer.ggml.merges", v.merges);
    if (!v.pre.empty()) w.set_string("tokenizer.ggml.pre", v.pre);
  }
  if (v.unk >= 0) w.set_u32("tokenizer.ggml.unknown_token_id", static_cast<uint32_t>(v.unk));
  if (v.bos >= 0) w.set_u32("tokenizer.ggml.bos_token_id", static_cast<uint32_t>(v.bos));
  if (v.eos >= 0) w.set_u32("tokenizer.ggml.eos_token_id", static_cast<uint32_t>(v.eos));
}

}  // namespace

const char* to_string(OutType type) {
  switch (type) {
    case OutType::f16:
      return "F16";
    case OutType::q8_0:
      return "Q8_0";
    case OutType::q4_0:
      return "Q4_0";
    default:
      return "F32";
  }
}

std::optional<Vocabulary> read_vocabulary(const File& f) {
  const auto model = f.optional_string("tokenizer.ggml.model");
  if (!model) return std::nullopt;
  auto bad = [&](const char* key, const std::string& what) {
    return Error(f.source() + ": metadata key \"" + key + "\" is " + what);
  };
  Vocabulary v;
  v.model = std::string(*model);
  const Value* tokens = f.find("tokenizer.ggml.tokens");
  const auto strings = tokens != nullptr ? tokens->as_strings() : std::nullopt;
  if (!strings) throw bad("tokenizer.ggml.tokens", tokens ? "not an array of strings" : "missing");
  v.tokens.assign(strings->begin(), strings->end());
  const size_t n = v.tokens.size();
  const std::string per_token = "not " + std::to_string(n) + " values, one per token";
  if (const Value* s = f.find("tokenizer.ggml.scores")) {
    auto scores = s->as_floats();
    if (!scores || scores->size() != n) throw bad("tokenizer.ggml.scores", per_token);
    v.scores = std::move(*scores);
  }
  if (const Value* t = f.find("tokenizer.ggml.token_type")) {
    const auto types = t->as_ints();
    if (!types || types->size() != n) throw bad("tokenizer.ggml.token_type", per_token);
    for (int64_t type : *types) {
      if (type < INT32_MIN || type > INT32_MAX) throw bad("tokenizer.ggml.token_type", per_token);
      v.types.push_back(static_cast<int32_t>(type));
    }
  }
  if (const Value* m = f.find("tokenizer.ggml.merges")) {
    const auto merges = m->as_strings();
    if (!merges) throw bad("tokenizer.ggml.merges", "not an array of strings");
    v.merges.assign(merges->begin(), merges->end());
  }
  v.pre = std::string(f.optional_string("tokenizer.ggml.pre").value_or(""));
  auto id = [&](const char* key) {
    const auto u = f.optional_uint(key);
    return u && *u < n ? static_cast<int32_t>(*u) : -1;  // outside: none, as llama.cpp
  };
  v.unk = id("tokenizer.ggml.unknown_token_id");
  v.bos = id("tokenizer.ggml.bos_token_id");
  v.eos = id("tokenizer.ggml.eos_token_id");
  return v;
}

Vocabulary vocabulary_from_llama2c(std::span<const std::string> pieces,
                                   std::span<const float> scores) {
  Vocabulary v;
  v.unk = 0, v.bos = 1, v.eos = 2;
  for (size_t id = 0; id < pieces.size(); ++id) {
    std::string text = pieces[id];
    int32_t type = 1;  // normal
    unsigned int byte = 0;
    char tail = 0;
    if (id == 0) {
      text = "<unk>", type = 2;
    } else if (id == 1) {
      text = "<s>", type = 3;
    } else if (id == 2) {
      text = "</s>", type = 3;
    } else if (text.empty()) {
      type = 3;
    } else if (text.size() == 6 && std::sscanf(text.c_str(), "<0x%02X%c", &byte, &tail) == 2 &&
               tail == '>') {
      type = 6;  // byte
    }
    // llama_escape_whitespaces: every space becomes U+2581.
    std::string escaped;
    for (char c : text) escaped += c == ' ' ? std::string("\xe2\x96\x81") : std::string(1, c);
    v.tokens.push_back(std::move(escaped));
    v.scores.push_back(id < scores.size() ? scores[id] : 0.0f);
    v.types.push_back(type);
  }
  return v;
}

LlamaWriteReport write_llama(const LlamaSpec& s, const std::vector<F32Tensor>& tensors,
                             OutType type, std::ostream& out, const std::string& destination) {
  Writer w;
  w.set_string("general.architecture", "llama");
  w.set_string("general.name", s.name);
  w.set_u32("general.file_type", file_type(type));
  if (type == OutType::q8_0 || type == OutType::q4_0) w.set_u32("general.quantization_version", 2);
  auto u32 = [&](const char* key, int64_t v) {
    if (v <= 0 || v > UINT32_MAX) {
      throw Error(destination + ": " + key + " " + std::to_string(v) + " does not fit GGUF's u32");
    }
    w.set_u32(std::string("llama.") + key, static_cast<uint32_t>(v));
  };
  u32("context_length", s.context_length);
  u32("embedding_length", s.dim);
  u32("feed_forward_length", s.hidden_dim);
  u32("attention.head_count", s.n_heads);
  u32("attention.head_count_kv", s.n_kv_heads);
  u32("block_count", s.n_layers);
  u32("rope.dimension_count", s.head_dim);
  u32("vocab_size", s.vocab_size);
  if (s.n_heads * s.head_dim != s.dim) {
    u32("attention.key_length", s.head_dim);
    u32("attention.value_length", s.head_dim);
  }
  w.set_f32("llama.attention.layer_norm_rms_epsilon", static_cast<float>(s.norm_eps));
  w.set_f32("llama.rope.freq_base", static_cast<float>(s.rope_theta));
  if (s.vocabulary) set_vocabulary(w, *s.vocabulary, destination);

  bool has_output = false;
  for (const F32Tensor& t : tensors) has_output = has_output || t.name == "output.weight";
  auto report = std::make_shared<LlamaWriteReport>();
  for (const F32Tensor& t : tensors) {
    TensorType tt = t.shape.size() >= 2 ? tensor_type(type) : TensorType::F32;
    const bool classifier =
        t.name == "output.weight" || (!has_output && t.name == "token_embd.weight");
    if (type == OutType::q4_0 && classifier) tt = TensorType::Q8_0;
    try {
      (void)Writer::tensor_bytes(t.name, t.shape, tt);  // rows of whole blocks
    } catch (const Error& e) {
      throw Error(destination + ": " + e.what());
    }
    int64_t elements = 1;
    for (int64_t d : t.shape) elements *= d;  // tensor_bytes checked the product
    const size_t index = report->tensors.size();
    report->tensors.push_back({t.name, type_name(tt), 0.0f});
    w.add_tensor(t.name, t.shape, tt, [&t, tt, report, index, elements, destination] {
      const std::vector<float> x = t.values();
      if (static_cast<int64_t>(x.size()) != elements) {
        throw Error(destination + ": tensor " + t.name + " produced " + std::to_string(x.size()) +
                    " values, its shape holds " + std::to_string(elements));
      }
      for (float v : x) {
        if (!std::isfinite(v)) {
          throw Error(destination + ": tensor " + t.name + " holds a non-finite value");
        }
      }
      return encode(x, tt, &report->tensors[index].max_error);
    });
  }
  report->bytes = w.write(out, destination);
  return *report;
}

}  // namespace llama::gguf
