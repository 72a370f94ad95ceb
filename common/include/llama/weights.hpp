// Views of a model's weights in one of two layouts: flat (every layered tensor
// holds all layers back to back, as in the file) or per-layer (one view per layer).
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "llama/config.hpp"

namespace llama {

// The layered tensors. In the flat layout each span covers every layer
// (leading dimension n_layers); in the per-layer layout, one layer.
// Matrices are row-major [out, in]: y = W x.
struct LayerTensors {
  std::span<const float> rms_att;  // f32 [dim]
  std::span<const float> wq;       // f32 [dim, dim]
  std::span<const float> wk;       // f32 [kv_dim, dim]
  std::span<const float> wv;       // f32 [kv_dim, dim]
  std::span<const float> wo;       // f32 [dim, dim]
  std::span<const float> rms_ffn;  // f32 [dim]
  std::span<const float> w1;       // f32 [hidden_dim, dim]
  std::span<const float> w2;       // f32 [dim, hidden_dim]
  std::span<const float> w3;       // f32 [hidden_dim, dim]
};

enum class WeightLayout { flat, per_layer };

struct TransformerWeights {
  WeightLayout layout = WeightLayout::flat;
  std::span<const float> token_embedding;  // f32 [vocab_size, dim]
  LayerTensors flat;                       // layout flat: f32 [n_layers, ...] each
  std::vector<LayerTensors> layers;        // layout per_layer: n_layers entries
  std::span<const float> rms_final;        // f32 [dim]
  std::span<const float> wcls;             // f32 [vocab_size, dim]
  // Keeps the memory behind the spans alive (the file mapping or an owned copy).
  std::shared_ptr<const void> storage;

  // Layer `l`'s tensors, whatever the layout.
  LayerTensors layer(const Config& config, int64_t l) const;
};

// Per-layer views into the same memory; no copy.
TransformerWeights to_per_layer(const TransformerWeights& weights, const Config& config);
// Flat views; no copy when the layers are already contiguous, else one owned copy.
TransformerWeights to_flat(const TransformerWeights& weights, const Config& config);
TransformerWeights with_layout(const TransformerWeights& weights, const Config& config,
                               WeightLayout layout);

}  // namespace llama
