// The `llama` architecture's keys and tensor names (llama.cpp's LLM_ARCH_LLAMA
// at commit c392e5094), checked against each other before any model is built.
#include "llama/formats/gguf_llama.hpp"

#include <set>

#include "llama/error.hpp"

namespace llama::gguf {
namespace {

std::string shape_string(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

class Binder {
 public:
  explicit Binder(const File& f) : f_(f) {}

  // The tensor `name` of row-major `shape`; `matrix` tensors may take any
  // supported type, the others (norms) must be F32.
  const Tensor* take(const std::string& name, const std::vector<int64_t>& shape, bool matrix,
                     const std::string& why) {
    const Tensor* t = f_.find_tensor(name);
    if (t == nullptr) fail("tensor " + quoted(name) + " is missing");
    if (t->shape != shape) {
      fail("tensor " + quoted(name) + " has shape " + shape_string(t->shape) + ", expected " +
           shape_string(shape) + " (" + why + ")");
    }
    if (!supported_type(t->type)) {
      fail("tensor " + quoted(name) + " has type " + type_name(t->type) +
           ", which is not supported (supported: " + supported_types() + ")");
    }
    // The kernels read f32 values and 16-bit block fields in place: a file whose
    // general.alignment leaves them misaligned cannot be viewed.
    const uintptr_t need = t->type == static_cast<uint32_t>(TensorType::F32) ? 4 : 2;
    if (reinterpret_cast<uintptr_t>(t->data.data()) % need != 0) {
      fail("tensor " + quoted(name) + " of type " + type_name(t->type) + " starts at file offset " +
           std::to_string(f_.data_offset() + t->offset) + ", not a multiple of " +
           std::to_string(need) + " (general.alignment " + std::to_string(f_.alignment()) + ")");
    }
    if (!matrix && t->type != static_cast<uint32_t>(TensorType::F32)) {
      fail("tensor " + quoted(name) + " has type " + type_name(t->type) + "; norms must be F32");
    }
    taken_.insert(name);
    return t;
  }
  bool has(const std::string& name) const { return f_.find_tensor(name) != nullptr; }
  // Refuses any tensor no binding took.
  void check_all_taken() const {
    for (const Tensor& t : f_.tensors()) {
      if (taken_.count(t.name) == 0) {
        fail("tensor " + quoted(t.name) + " is not part of a llama model (" +
             std::to_string(f_.tensors().size()) + " tensors, " + std::to_string(taken_.size()) +
             " used)");
      }
    }
  }
  [[noreturn]] void fail(const std::string& why) const { throw Error(f_.source() + ": " + why); }

 private:
  const File& f_;
  std::set<std::string> taken_;
};

int64_t positive(const File& f, const std::string& key, uint64_t v) {
  if (v == 0 || v > (uint64_t{1} << 31)) {
    throw Error(f.source() + ": metadata key " + quoted(key) + " is " + std::to_string(v) +
                " (expected 1 .. 2^31)");
  }
  return static_cast<int64_t>(v);
}

}  // namespace

bool supported_type(uint32_t type) {
  switch (static_cast<TensorType>(type)) {
    case TensorType::F32:
    case TensorType::F16:
    case TensorType::BF16:
    case TensorType::Q8_0:
    case TensorType::Q4_0:
    case TensorType::Q4_K:
    case TensorType::Q6_K:
    case TensorType::Q4_1:
    case TensorType::Q5_0:
    case TensorType::Q5_1:
    case TensorType::Q5_K:
    case TensorType::Q3_K:
    case TensorType::Q2_K:
      return true;
    default:
      return false;
  }
}

std::string supported_types() {
  return "F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K";
}

LlamaFile read_llama(const File& f) {
  const std::string_view arch = f.string("general.architecture");
  if (arch != "llama") {
    throw Error(f.source() + ": general.architecture is " + quoted(arch) +
                "; only \"llama\" models are supported");
  }
  auto key = [](const char* k) { return std::string("llama.") + k; };
  auto required = [&](const char* k) { return positive(f, key(k), f.uint(key(k))); };
  LlamaFile m;
  m.dim = required("embedding_length");
  m.hidden_dim = required("feed_forward_length");
  m.n_layers = required("block_count");
  m.n_heads = required("attention.head_count");
  m.context_length = required("context_length");
  m.n_kv_heads = m.n_heads;
  if (auto kv = f.optional_uint(key("attention.head_count_kv"))) {
    m.n_kv_heads = positive(f, key("attention.head_count_kv"), *kv);
  }
  if (m.n_heads % m.n_kv_heads != 0) {
    throw Error(f.source() + ": llama.attention.head_count " + std::to_string(m.n_heads) +
                " is not a multiple of llama.attention.head_count_kv " +
                std::to_string(m.n_kv_heads));
  }
  m.head_dim = m.dim / m.n_heads;
  if (auto k = f.optional_uint(key("attention.key_length"))) {
    m.head_dim = positive(f, key("attention.key_length"), *k);
  } else if (m.dim % m.n_heads != 0) {
    throw Error(f.source() + ": llama.embedding_length " + std::to_string(m.dim) +
                " is not a multiple of llama.attention.head_count " + std::to_string(m.n_heads) +
                " and llama.attention.key_length is absent");
  }
  if (auto v = f.optional_uint(key("attention.value_length")); v && *v != uint64_t(m.head_dim)) {
    throw Error(f.source() + ": llama.attention.value_length " + std::to_string(*v) +
                " differs from the key length " + std::to_string(m.head_dim) +
                ", which llama models do not do");
  }
  if (m.head_dim % 2 != 0) {
    throw Error(f.source() + ": head size " + std::to_string(m.head_dim) +
                " is odd; the rotary embedding needs pairs");
  }
  if (auto rd = f.optional_uint(key("rope.dimension_count")); rd && *rd != uint64_t(m.head_dim)) {
    throw Error(f.source() + ": llama.rope.dimension_count " + std::to_string(*rd) +
                " differs from the head size " + std::to_string(m.head_dim) +
                " (partial rotary embeddings are not supported)");
  }
  m.norm_eps = f.number(key("attention.layer_norm_rms_epsilon"));
  if (!(m.norm_eps > 0 && m.norm_eps < 1)) {
    throw Error(f.source() + ": llama.attention.layer_norm_rms_epsilon " +
                std::to_string(m.norm_eps) + " is not in (0, 1)");
  }
  m.rope_theta = f.optional_number(key("rope.freq_base")).value_or(10000.0);
  if (!(m.rope_theta > 1 && m.rope_theta < 1e12)) {
    throw Error(f.source() + ": llama.rope.freq_base " + std::to_string(m.rope_theta) +
                " is not in (1, 1e12)");
  }
  const auto scaling = f.optional_string(key("rope.scaling.type"));
  if (scaling && *scaling == "linear") {
    m.rope_linear_factor = f.number(key("rope.scaling.factor"));
    if (!(m.rope_linear_factor >= 1 && m.rope_linear_factor < 1e6)) {
      throw Error(f.source() + ": llama.rope.scaling.factor " +
                  std::to_string(m.rope_linear_factor) + " is not in [1, 1e6)");
    }
  } else if (scaling && *scaling != "none") {
    throw Error(f.source() + ": llama.rope.scaling.type " + quoted(*scaling) +
                " is not supported (none and linear are)");
  }
  if (auto e = f.optional_uint(key("expert_count")); e && *e > 0) {
    throw Error(f.source() + ": llama.expert_count is " + std::to_string(*e) +
                ": mixture-of-experts models are not supported");
  }
  // Every layer needs 9 tensors: refuse a block count the file cannot hold
  // before reserving for it.
  if (static_cast<uint64_t>(m.n_layers) * 9 + 2 > f.tensors().size()) {
    throw Error(f.source() + ": llama.block_count " + std::to_string(m.n_layers) + " needs " +
                std::to_string(m.n_layers * 9 + 2) + " tensors or more, the file has " +
                std::to_string(f.tensors().size()));
  }

  Binder b(f);
  const Tensor* emb = f.find_tensor("token_embd.weight");
  if (emb == nullptr) b.fail("tensor \"token_embd.weight\" is missing");
  if (emb->shape.size() != 2) b.fail("tensor \"token_embd.weight\" is not a matrix");
  m.vocab_size = emb->shape[0];
  const std::string dims = "dim " + std::to_string(m.dim);
  m.token_embd = b.take("token_embd.weight", {m.vocab_size, m.dim}, true, dims);
  if (auto v = f.optional_uint(key("vocab_size")); v && *v != uint64_t(m.vocab_size)) {
    b.fail("llama.vocab_size " + std::to_string(*v) +
           " disagrees with the embedding "
           "token_embd.weight's " +
           std::to_string(m.vocab_size) + " rows");
  }
  if (const Value* tokens = f.find("tokenizer.ggml.tokens");
      tokens != nullptr && tokens->count != uint64_t(m.vocab_size)) {
    b.fail("the tokenizer has " + std::to_string(tokens->count) +
           " tokens (tokenizer.ggml.tokens) but the embedding token_embd.weight has " +
           std::to_string(m.vocab_size) + " rows");
  }
  m.output_norm = b.take("output_norm.weight", {m.dim}, false, dims);
  if (b.has("output.weight")) {
    m.output = b.take("output.weight", {m.vocab_size, m.dim}, true,
                      "vocab " + std::to_string(m.vocab_size) + ", " + dims);
  }
  const int64_t q = m.n_heads * m.head_dim, kv = m.n_kv_heads * m.head_dim;
  const std::string qw = "n_heads " + std::to_string(m.n_heads) + " x head_dim " +
                         std::to_string(m.head_dim) + ", " + dims;
  const std::string kvw = "n_kv_heads " + std::to_string(m.n_kv_heads) + " x head_dim " +
                          std::to_string(m.head_dim) + ", " + dims;
  const std::string hw = "hidden " + std::to_string(m.hidden_dim) + ", " + dims;
  m.layers.resize(static_cast<size_t>(m.n_layers));
  for (int64_t l = 0; l < m.n_layers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    LlamaLayer& L = m.layers[static_cast<size_t>(l)];
    L.attn_norm = b.take(p + "attn_norm.weight", {m.dim}, false, dims);
    L.wq = b.take(p + "attn_q.weight", {q, m.dim}, true, qw);
    L.wk = b.take(p + "attn_k.weight", {kv, m.dim}, true, kvw);
    L.wv = b.take(p + "attn_v.weight", {kv, m.dim}, true, kvw);
    L.wo = b.take(p + "attn_output.weight", {m.dim, q}, true, qw);
    L.ffn_norm = b.take(p + "ffn_norm.weight", {m.dim}, false, dims);
    L.w1 = b.take(p + "ffn_gate.weight", {m.hidden_dim, m.dim}, true, hw);
    L.w2 = b.take(p + "ffn_down.weight", {m.dim, m.hidden_dim}, true, hw);
    L.w3 = b.take(p + "ffn_up.weight", {m.hidden_dim, m.dim}, true, hw);
  }
  b.check_all_taken();
  return m;
}

}  // namespace llama::gguf
