// Model hyper-parameters: the seven header fields of a llama2.c checkpoint and
// the quantities derived from them.
#pragma once

#include <cstdint>
#include <string>

namespace llama {

struct Config {
  int64_t dim = 0;         // transformer width
  int64_t hidden_dim = 0;  // feed-forward width
  int64_t n_layers = 0;
  int64_t n_heads = 0;     // query heads
  int64_t n_kv_heads = 0;  // key/value heads (< n_heads: grouped-query attention)
  int64_t vocab_size = 0;
  int64_t seq_len = 0;            // maximum number of positions
  bool shared_classifier = true;  // classifier reuses the token embedding

  int64_t head_size() const { return dim / n_heads; }
  int64_t kv_dim() const { return n_kv_heads * head_size(); }
  int64_t kv_mul() const { return n_heads / n_kv_heads; }  // query heads per kv head

  // Number of f32 values in the KV cache (keys and values, all layers).
  int64_t kv_cache_floats() const;
  // Number of parameters (f32 values) in the weights, classifier included.
  int64_t parameter_count() const;

  // Throws Error (prefixed by `source`) unless every field is positive, the
  // head arithmetic is consistent and every derived size fits in 64 bits.
  void validate(const std::string& source) const;

  // Builds a Config from the raw header ints (negative vocab_size: separate classifier).
  static Config from_header(const int32_t header[7]);

  std::string to_string() const;
};

}  // namespace llama
