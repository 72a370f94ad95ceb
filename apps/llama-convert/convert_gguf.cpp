// A llama2.c checkpoint's tensors under GGUF's llama names. llama2.c's q/k rows
// are in the interleaved rotary layout GGUF's llama tensors use (llama.cpp's
// convert-llama2c-to-ggml copies them unpermuted), so every tensor is copied as
// is; Q8_0 (version 2) sources are dequantized first.
#include "convert_gguf.hpp"

#include "llama/error.hpp"
#include "llama/kernels/products/llama2c_int8.hpp"
#include "llama/tokenizers/llama2c_tokenizer.hpp"

namespace llama::convert {
namespace {

const TensorInfo& tensor(const Checkpoint& ck, const std::string& name) {
  for (const TensorInfo& t : ck.tensors()) {
    if (t.name == name) return t;
  }
  throw Error("checkpoint has no tensor " + name);
}

// Layer `l` (or the whole tensor when `layered` is false) of a checkpoint
// tensor as f32 values.
std::function<std::vector<float>()> values(const TensorInfo& t, int64_t n_layers, int64_t l,
                                           bool layered) {
  return [&t, n_layers, l, layered] {
    if (!t.quantized.empty()) {
      const QuantizedTensor& q = t.quantized[static_cast<size_t>(layered ? l : 0)];
      std::vector<float> out(q.values.size());
      dequantize(q, out);
      return out;
    }
    const size_t per = layered ? t.data.size() / static_cast<size_t>(n_layers) : t.data.size();
    const float* p = t.data.data() + (layered ? static_cast<size_t>(l) * per : 0);
    return std::vector<float>(p, p + per);
  };
}

}  // namespace

gguf::LlamaWriteReport write_gguf(const Checkpoint& in, const std::string& tokenizer,
                                  const std::optional<gguf::Vocabulary>& vocabulary,
                                  gguf::OutType type, std::ostream& out,
                                  const std::string& destination) {
  const Config& c = in.config();
  gguf::LlamaSpec spec;
  spec.dim = c.dim, spec.hidden_dim = c.hidden_dim, spec.n_layers = c.n_layers;
  spec.n_heads = c.n_heads, spec.n_kv_heads = c.n_kv_heads, spec.head_dim = c.head_size();
  spec.vocab_size = c.vocab_size, spec.context_length = c.seq_len;
  if (!tokenizer.empty()) {
    const Llama2cTokenizer tok(tokenizer, c.vocab_size);
    std::vector<std::string> pieces;
    std::vector<float> scores;
    for (int32_t i = 0; i < tok.vocab_size(); ++i) {
      pieces.emplace_back(tok.piece(i));
      scores.push_back(tok.score(i));
    }
    spec.vocabulary = gguf::vocabulary_from_llama2c(pieces, scores);
  } else {
    spec.vocabulary = vocabulary;
  }
  const int64_t L = c.n_layers, dim = c.dim, kv = c.kv_dim(), hidden = c.hidden_dim;
  const int64_t V = c.vocab_size;
  std::vector<gguf::F32Tensor> t;
  auto whole = [&](const char* name, const char* from, std::vector<int64_t> shape) {
    t.push_back({name, std::move(shape), values(tensor(in, from), L, 0, false)});
  };
  whole("token_embd.weight", "token_embedding", {V, dim});
  whole("output_norm.weight", "rms_final", {dim});
  if (!c.shared_classifier) whole("output.weight", "wcls", {V, dim});
  for (int64_t l = 0; l < L; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    auto layer = [&](const char* name, const char* from, std::vector<int64_t> shape) {
      t.push_back({p + name, std::move(shape), values(tensor(in, from), L, l, true)});
    };
    layer("attn_q.weight", "wq", {dim, dim});
    layer("attn_k.weight", "wk", {kv, dim});
    layer("attn_v.weight", "wv", {kv, dim});
    layer("attn_output.weight", "wo", {dim, dim});
    layer("attn_norm.weight", "rms_att", {dim});
    layer("ffn_gate.weight", "w1", {hidden, dim});
    layer("ffn_down.weight", "w2", {dim, hidden});
    layer("ffn_up.weight", "w3", {hidden, dim});
    layer("ffn_norm.weight", "rms_ffn", {dim});
  }
  return gguf::write_llama(spec, t, type, out, destination);
}

}  // namespace llama::convert
