// Model hyper-parameters, whatever the file format: the shape (llama2.c's seven
// header fields plus an independent head_dim), the normalization epsilon, the
// rotary embedding (theta, scaling, and which elements of a head rotate
// together), tied embeddings, the context length and the special token ids.
// Readers fill it; Config::validate checks it with overflow-checked arithmetic
// before any size derived from it is used.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace llama {

// How the rotary embedding pairs a head's elements. llama2.c (and GGUF's llama
// tensors) rotate interleaved pairs (2i, 2i + 1); Hugging Face's rotate_half
// rotates the halves (i, i + head_dim / 2). Pair i turns by the same angle in
// both; only the elements differ, so q/k rows are read in place either way.
enum class RopeLayout { interleaved, halves };
const char* to_string(RopeLayout layout);

// How a position's rotary angles are computed (RopeTable::angles): per pair,
// float(pos) * inv_freq[i] (run.c, transformers), or ggml's
// (llama.cpp, so GGUF files): theta_0 = float(pos), theta_{i+1} = theta_i *
// powf(rope_theta, -2 / head_dim), each product rounded to f32. The two
// differ in the last bits of the angles, which is enough to flip a Q8_0
// activation's rounding (docs/formats.md).
enum class RopeAngles { per_pair, ggml };
const char* to_string(RopeAngles angles);

// Rotary frequency scaling (transformers' rope_type), applied by the core's
// RoPE table (kernels/steps/rope.hpp).
enum class RopeScalingType { none, linear, llama3 };
const char* to_string(RopeScalingType type);

struct RopeScaling {
  RopeScalingType type = RopeScalingType::none;
  double factor = 1.0;           // linear and llama3
  double low_freq_factor = 1.0;  // llama3
  double high_freq_factor = 4.0;
  int64_t original_max_position_embeddings = 0;  // llama3: the context before scaling
};

struct Config {
  int64_t dim = 0;         // transformer width (the residual stream)
  int64_t hidden_dim = 0;  // feed-forward width
  int64_t n_layers = 0;
  int64_t n_heads = 0;     // query heads
  int64_t n_kv_heads = 0;  // key/value heads (< n_heads: grouped-query attention)
  int64_t vocab_size = 0;
  int64_t seq_len = 0;     // positions the run state holds (the KV cache); backends size from it
  int64_t head_dim = 0;    // per head; n_heads * head_dim need not equal dim
  double norm_eps = 1e-5;  // RMSNorm epsilon (f32 kernels use float(norm_eps))
  double rope_theta = 10000.0;
  RopeScaling rope_scaling;
  RopeLayout rope_layout = RopeLayout::interleaved;
  RopeAngles rope_angles = RopeAngles::per_pair;
  bool shared_classifier = true;  // tied embeddings: the classifier is the token embedding
  int64_t context_length = 0;     // positions the model was trained for (llama2.c: seq_len)
  int32_t bos_id = 1;             // -1: the model has none
  std::vector<int32_t> eos_ids = {2};

  int64_t head_size() const { return head_dim; }
  int64_t q_dim() const { return n_heads * head_dim; }      // query width: wq's rows, wo's columns
  int64_t kv_dim() const { return n_kv_heads * head_dim; }  // key/value width
  int64_t kv_mul() const { return n_heads / n_kv_heads; }   // query heads per kv head

  // Number of f32 values in the KV cache (keys and values, all layers).
  int64_t kv_cache_floats() const;
  // Number of parameters in the weights, classifier included.
  int64_t parameter_count() const;

  // Throws Error (prefixed by `source`) unless every size is positive, the
  // head arithmetic is consistent, every derived size fits in 64 bits, the
  // rope and norm parameters are finite and in range, and the token ids are
  // in the vocabulary.
  void validate(const std::string& source) const;

  // A llama2.c model of this shape with the values llama2.c implies:
  // head_dim = dim / n_heads (0 when it does not divide; validate names that),
  // eps 1e-5, theta 10000, no scaling, interleaved pairs, context length =
  // seq_len, BOS 1 and EOS 2 (those the vocabulary has).
  static Config llama2c(int64_t dim, int64_t hidden_dim, int64_t n_layers, int64_t n_heads,
                        int64_t n_kv_heads, int64_t vocab_size, int64_t seq_len,
                        bool shared_classifier);
  // The same from a llama2.c header (negative vocab_size: separate classifier).
  static Config from_header(const int32_t header[7]);

  // One line: the shape, then the rope and token settings that differ from
  // llama2.c's.
  std::string to_string() const;
};

}  // namespace llama
