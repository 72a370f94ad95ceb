// ModelCost from a checkpoint's config and tensor table.
#include "model_cost.hpp"

namespace llama::bench {

ModelCost ModelCost::of(const Checkpoint& ck) {
  const Config& c = ck.config();
  ModelCost m;
  const int64_t per_layer =
      2 * c.dim * c.dim + 2 * c.kv_dim() * c.dim + 3 * c.dim * c.hidden_dim;  // checked by validate
  m.matmul_parameters = c.n_layers * per_layer + c.vocab_size * c.dim;
  m.weight_bytes_per_token = ck.weight_bytes();
  if (!c.shared_classifier) {
    // The separate classifier is already counted; the embedding table is not read whole.
    for (const TensorInfo& t : ck.tensors()) {
      if (t.name == "token_embedding") {
        m.weight_bytes_per_token -= static_cast<int64_t>(t.data.size_bytes());
      }
    }
  }
  m.weight_bytes_per_token += c.dim * 4;  // the embedding row
  m.kv_bytes_per_position = 2 * c.n_layers * c.kv_dim() * 4;
  m.kv_cache_bytes = c.kv_cache_floats() * 4;
  return m;
}

double ModelCost::decode_bytes_per_token(int64_t start, int64_t n) const {
  // Position pos attends over pos + 1 cached positions; the mean over the run.
  const double mean_positions = static_cast<double>(start) + static_cast<double>(n + 1) / 2.0;
  return static_cast<double>(weight_bytes_per_token) +
         static_cast<double>(kv_bytes_per_position) * mean_positions;
}

}  // namespace llama::bench
