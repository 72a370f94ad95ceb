// tiny_llama_gguf: seeded weights quantized with the core's quantizers.
#include "gguf_tiny.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>

#include "llama/kernels/numbers/gguf_blocks.hpp"
#include "llama/kernels/numbers/half.hpp"

namespace llama::test {
namespace gguf = llama::gguf;

namespace {

std::vector<float> weights(int64_t n, uint64_t seed, float scale) {
  std::vector<float> v(static_cast<size_t>(n));
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (float& x : v) {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    x = (static_cast<float>((s * 0x2545F4914F6CDD1Dull) >> 40) / 16777216.0f - 0.5f) * scale;
  }
  return v;
}

std::vector<std::byte> encode(const std::vector<float>& x, gguf::TensorType type) {
  std::vector<std::byte> out;
  auto put = [&](const void* p, size_t n) {
    const auto* b = static_cast<const std::byte*>(p);
    out.insert(out.end(), b, b + n);
  };
  switch (type) {
    case gguf::TensorType::F16:
    case gguf::TensorType::BF16:
      for (float v : x) {
        const uint16_t h = type == gguf::TensorType::F16 ? f32_to_f16(v) : f32_to_bf16(v);
        put(&h, 2);
      }
      break;
    case gguf::TensorType::Q8_0: {
      std::vector<BlockQ8_0> b(x.size() / 32);
      quantize_q8_0(x, b);
      put(b.data(), b.size() * sizeof(BlockQ8_0));
      break;
    }
    case gguf::TensorType::Q4_0: {
      std::vector<BlockQ4_0> b(x.size() / 32);
      quantize_q4_0(x, b);
      put(b.data(), b.size() * sizeof(BlockQ4_0));
      break;
    }
    case gguf::TensorType::Q3_K:
    case gguf::TensorType::Q2_K: {
      // No quantizer for these: codes and scales from the values' bits, the f16
      // scales (Q3_K: d at byte 108; Q2_K: d, dmin at 80, 82) set to 2^-7.
      const size_t bb = type == gguf::TensorType::Q3_K ? 110 : 84;
      std::vector<uint8_t> b(x.size() / 256 * bb);
      for (size_t i = 0; i < b.size(); ++i) {
        uint32_t u;
        std::memcpy(&u, &x[i % x.size()], 4);
        b[i] = static_cast<uint8_t>(u >> 8);
      }
      const uint16_t h = f32_to_f16(1.0f / 128);
      for (size_t at = 0; at < b.size(); at += bb) {
        for (size_t f : bb == 110 ? std::vector<size_t>{108} : std::vector<size_t>{80, 82}) {
          std::memcpy(b.data() + at + f, &h, 2);
        }
      }
      put(b.data(), b.size());
      break;
    }
    default:
      put(x.data(), x.size() * 4);
  }
  return out;
}

}  // namespace

std::vector<std::byte> tiny_llama_gguf(const TinyLlama& s) {
  gguf::Writer w;
  auto dropped = [&](const std::string& k) {
    return std::find(s.drop.begin(), s.drop.end(), k) != s.drop.end();
  };
  auto u32 = [&](const std::string& k, int64_t v) {
    if (!dropped(k)) w.set_u32(k, static_cast<uint32_t>(v));
  };
  if (!dropped("general.architecture")) w.set_string("general.architecture", "llama");
  u32("llama.embedding_length", s.dim);
  u32("llama.feed_forward_length", s.hidden);
  u32("llama.block_count", s.layers);
  u32("llama.attention.head_count", s.heads);
  u32("llama.attention.head_count_kv", s.kv_heads);
  u32("llama.context_length", s.context);
  u32("llama.rope.dimension_count", s.dim / s.heads);
  if (!dropped("llama.attention.layer_norm_rms_epsilon")) {
    w.set_f32("llama.attention.layer_norm_rms_epsilon", 1e-5f);
  }
  // A byte-fallback vocabulary: <unk>, <s>, </s>, 256 bytes, then pieces.
  const int64_t n_tokens = s.tokenizer_tokens < 0 ? s.vocab : s.tokenizer_tokens;
  std::vector<std::string> tokens;
  std::vector<float> scores;
  std::vector<int32_t> types;
  for (int64_t i = 0; i < n_tokens; ++i) {
    std::string t;
    int32_t type = 1;
    if (i == 0) {
      t = "<unk>", type = 2;
    } else if (i < 3) {
      t = i == 1 ? "<s>" : "</s>", type = 3;
    } else if (i < 259) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "<0x%02X>", static_cast<int>(i - 3));
      t = buf, type = 6;
    } else {
      t = "\xe2\x96\x81" + std::string(1, static_cast<char>('a' + (i - 259) % 26)) +
          std::to_string(i);
    }
    tokens.push_back(t);
    scores.push_back(i < 259 ? 0.0f : -static_cast<float>(i));
    types.push_back(type);
  }
  if (!dropped("tokenizer.ggml.model")) w.set_string("tokenizer.ggml.model", "llama");
  if (!dropped("tokenizer.ggml.tokens")) w.set_strings("tokenizer.ggml.tokens", tokens);
  if (!dropped("tokenizer.ggml.scores")) w.set_f32s("tokenizer.ggml.scores", scores);
  if (!dropped("tokenizer.ggml.token_type")) w.set_i32s("tokenizer.ggml.token_type", types);
  u32("tokenizer.ggml.bos_token_id", 1);
  u32("tokenizer.ggml.eos_token_id", 2);
  u32("tokenizer.ggml.unknown_token_id", 0);

  uint64_t seed = 1;
  auto tensor = [&](const std::string& name, std::vector<int64_t> shape, bool matrix) {
    if (dropped(name)) return;
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    const auto type = matrix ? s.matrix_type : gguf::TensorType::F32;
    const auto values = matrix ? weights(n, seed++, 0.2f) : weights(n, seed++, 0.1f);
    std::vector<float> v = values;
    if (!matrix) {
      for (float& x : v) x += 1.0f;  // norms near 1
    }
    const auto bytes = encode(v, type);
    w.add_tensor(name, std::move(shape), type, [bytes] { return bytes; });
  };
  const int64_t hd = s.dim / s.heads;
  tensor("token_embd.weight", {s.vocab, s.dim}, true);
  tensor("output_norm.weight", {s.dim}, false);
  if (!s.tied) tensor("output.weight", {s.vocab, s.dim}, true);
  for (int64_t l = 0; l < s.layers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    tensor(p + "attn_norm.weight", {s.dim}, false);
    tensor(p + "attn_q.weight", {s.heads * hd, s.dim}, true);
    tensor(p + "attn_k.weight", {s.kv_heads * hd, s.dim}, true);
    tensor(p + "attn_v.weight", {s.kv_heads * hd, s.dim}, true);
    tensor(p + "attn_output.weight", {s.dim, s.heads * hd}, true);
    tensor(p + "ffn_norm.weight", {s.dim}, false);
    tensor(p + "ffn_gate.weight", {s.hidden, s.dim}, true);
    tensor(p + "ffn_down.weight", {s.dim, s.hidden}, true);
    tensor(p + "ffn_up.weight", {s.hidden, s.dim}, true);
  }
  if (s.edit) s.edit(w);
  std::ostringstream out;
  w.write(out, "tiny.gguf", s.alignment);
  const std::string str = out.str();
  std::vector<std::byte> b(str.size());
  std::memcpy(b.data(), str.data(), str.size());
  return b;
}

}  // namespace llama::test
