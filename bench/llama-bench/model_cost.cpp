// ModelCost from a model's config and tensor views, whatever its format.
#include "model_cost.hpp"

namespace llama::bench {

ModelCost ModelCost::of(const Model& model, KvCacheOption kv) {
  const Config& c = model.config;
  ModelCost m;
  const int64_t per_layer = 2 * c.q_dim() * c.dim + 2 * c.kv_dim() * c.dim +
                            3 * c.dim * c.hidden_dim;  // checked by validate
  m.matmul_parameters = c.n_layers * per_layer + c.vocab_size * c.dim;
  m.weight_bytes_per_token = model.weights.bytes();
  if (!model.weights.tied()) {
    // The separate classifier is already counted; the embedding table is not read whole.
    const Tensor& e = model.weights.token_embedding;
    m.weight_bytes_per_token -= static_cast<int64_t>(e.data.size() + e.scales.size());
  }
  m.weight_bytes_per_token += c.dim * 4;  // the embedding row
  const int64_t element = kv_element_bytes(resolve_kv_cache(kv, model).dtype);
  m.kv_bytes_per_position = 2 * c.n_layers * c.kv_dim() * element;
  m.kv_cache_bytes = c.kv_cache_floats() * element;
  return m;
}

double ModelCost::decode_bytes_per_token(int64_t start, int64_t n) const {
  // Position pos attends over pos + 1 cached positions; the mean over the run.
  const double mean_positions = static_cast<double>(start) + static_cast<double>(n + 1) / 2.0;
  return static_cast<double>(weight_bytes_per_token) +
         static_cast<double>(kv_bytes_per_position) * mean_positions;
}

}  // namespace llama::bench
