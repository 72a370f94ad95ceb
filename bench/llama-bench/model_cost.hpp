// The work one token costs: bytes read in decode (weights and KV cache) and
// FLOPs of the matrix products, against which the rooflines are compared.
#pragma once

#include <cstdint>

#include "llama/kv_cache.hpp"
#include "llama/model.hpp"

namespace llama::bench {

struct ModelCost {
  // Weights in matrix products: every layer's wq, wk, wv, wo, w1, w2, w3 and
  // the classifier. Prefill FLOPs per token = 2 x this (attention excluded).
  int64_t matmul_parameters = 0;
  // Bytes a decode step reads besides the KV cache: every tensor except the
  // token-embedding table (of which one row is read), plus the classifier.
  int64_t weight_bytes_per_token = 0;
  // Keys and values of one position over all layers: f32 [2, n_layers, kv_dim].
  int64_t kv_bytes_per_position = 0;
  int64_t kv_cache_bytes = 0;  // the whole cache: seq_len positions

  // `kv`: the cache the run asks for (--kv-cache; default: the model's).
  static ModelCost of(const Model& model, KvCacheOption kv = KvCacheOption::model_default);

  // Mean bytes per token decoding positions [start, start + n): the weights
  // plus keys and values of positions 0..pos for each pos.
  double decode_bytes_per_token(int64_t start, int64_t n) const;
  double prefill_flops_per_token() const { return 2.0 * static_cast<double>(matmul_parameters); }
};

}  // namespace llama::bench
