// TRANSITIONAL (removed once every backend reads llama/weights.hpp's typed
// tensors): views of a model's weights in one of two layouts, flat (every
// layered tensor holds all layers back to back, as in the file) or per-layer
// (one view per layer), and in one of two formats: f32, or Q8_0 (int8 values
// with an f32 scale per group of `group_size` consecutive values, llama2.c's
// version 2 checkpoints). Only llama2.c files fill it.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
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
enum class WeightFormat { f32, q8_0 };

// A Q8_0 matrix (or all layers of one, in the flat layout): value i is
// values[i] * scales[i / group_size]. Every row holds whole groups.
struct QuantizedTensor {
  std::span<const int8_t> values;  // i8 [rows, cols]
  std::span<const float> scales;   // f32 [rows * cols / group_size]
  int64_t group_size = 0;
};

// The layered matrices of a Q8_0 model (its norms stay f32 in LayerTensors).
struct QuantizedLayerTensors {
  QuantizedTensor wq;  // [dim, dim]
  QuantizedTensor wk;  // [kv_dim, dim]
  QuantizedTensor wv;  // [kv_dim, dim]
  QuantizedTensor wo;  // [dim, dim]
  QuantizedTensor w1;  // [hidden_dim, dim]
  QuantizedTensor w2;  // [dim, hidden_dim]
  QuantizedTensor w3;  // [hidden_dim, dim]
};

// Format f32: every f32 span is set, the quantized members are empty.
// Format q8_0: the norms (rms_att, rms_ffn, rms_final) are f32; token_embedding
// is the dequantized f32 table (for the lookup, as runq.c); the matrices and the
// classifier are in the q_* members and their f32 spans are empty.
struct TransformerWeights {
  WeightLayout layout = WeightLayout::flat;
  WeightFormat format = WeightFormat::f32;
  std::span<const float> token_embedding;  // f32 [vocab_size, dim]
  LayerTensors flat;                       // layout flat: f32 [n_layers, ...] each
  std::vector<LayerTensors> layers;        // layout per_layer: n_layers entries
  std::span<const float> rms_final;        // f32 [dim]
  std::span<const float> wcls;             // f32 [vocab_size, dim]
  // Format q8_0 only.
  int64_t group_size = 0;                       // values per scale
  QuantizedLayerTensors q_flat;                 // layout flat: [n_layers, ...] each
  std::vector<QuantizedLayerTensors> q_layers;  // layout per_layer: n_layers entries
  QuantizedTensor q_wcls;                       // [vocab_size, dim]
  // Keeps the memory behind the spans alive (the file mapping or an owned copy).
  std::shared_ptr<const void> storage;

  // Layer `l`'s tensors, whatever the layout.
  LayerTensors layer(const Config& config, int64_t l) const;
  // Layer `l`'s quantized matrices, whatever the layout (format q8_0).
  QuantizedLayerTensors quantized_layer(const Config& config, int64_t l) const;
};

// Per-layer views into the same memory; no copy.
TransformerWeights to_per_layer(const TransformerWeights& weights, const Config& config);
// Flat views; no copy when the layers are already contiguous, else one owned copy.
TransformerWeights to_flat(const TransformerWeights& weights, const Config& config);
// For backends without Q8_0 kernels: throws Error naming `backend` unless the
// weights are f32.
void require_f32_weights(const TransformerWeights& weights, const std::string& backend);

TransformerWeights with_layout(const TransformerWeights& weights, const Config& config,
                               WeightLayout layout);

}  // namespace llama
