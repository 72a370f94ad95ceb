// GGUF's `llama` architecture: its hyper-parameters from the metadata and
// every tensor bound by name, with shapes and types checked against them.
// Everything a Model needs is validated here, format-side; gguf_model.cpp
// turns the result into the core's Model.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "llama/formats/gguf_file.hpp"

namespace llama::gguf {

// The tensor types a llama GGUF can hold here: F32 (any tensor), and for the
// matrices F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K.
// Others are refused naming the tensor and its type.
bool supported_type(uint32_t type);
std::string supported_types();  // "F32, F16, BF16, Q8_0, ..., Q6_K", as above

struct LlamaLayer {
  const Tensor* attn_norm = nullptr;  // [dim]
  const Tensor* wq = nullptr;         // attn_q      [n_heads * head_dim, dim]
  const Tensor* wk = nullptr;         // attn_k      [n_kv_heads * head_dim, dim]
  const Tensor* wv = nullptr;         // attn_v      [n_kv_heads * head_dim, dim]
  const Tensor* wo = nullptr;         // attn_output [dim, n_heads * head_dim]
  const Tensor* ffn_norm = nullptr;   // [dim]
  const Tensor* w1 = nullptr;         // ffn_gate    [hidden, dim]
  const Tensor* w2 = nullptr;         // ffn_down    [dim, hidden]
  const Tensor* w3 = nullptr;         // ffn_up      [hidden, dim]
};

struct LlamaFile {
  // llama.* metadata
  int64_t dim = 0;                // embedding_length
  int64_t hidden_dim = 0;         // feed_forward_length
  int64_t n_layers = 0;           // block_count
  int64_t n_heads = 0;            // attention.head_count
  int64_t n_kv_heads = 0;         // attention.head_count_kv (default: head_count)
  int64_t head_dim = 0;           // attention.key_length (default: dim / head_count)
  int64_t vocab_size = 0;         // vocab_size, else the tokenizer's, else the embedding's rows
  int64_t context_length = 0;     // context_length
  double norm_eps = 0;            // attention.layer_norm_rms_epsilon
  double rope_theta = 10000;      // rope.freq_base
  double rope_linear_factor = 1;  // rope.scaling.type "linear": rope.scaling.factor
  // tensors
  const Tensor* token_embd = nullptr;   // [vocab, dim]
  const Tensor* output_norm = nullptr;  // [dim]
  const Tensor* output = nullptr;       // [vocab, dim]; nullptr: tied to token_embd
  std::vector<LlamaLayer> layers;
};

// Reads `f` as a llama model; throws Error ("FILE: what is wrong", one line)
// for another architecture, a missing or inconsistent key, a missing, extra,
// mis-shaped or unsupported tensor, or a tokenizer whose token count is not
// the vocabulary's. The tensors point into `f`.
LlamaFile read_llama(const File& f);

}  // namespace llama::gguf
