// The three graphs of a forward pass, for `tokens` rows at a time:
//   attention_in: x -> rmsnorm -> stacked q/k/v product -> q, k, v (slices)
//   feed_forward: x, att -> x + wo att -> rmsnorm -> stacked w1/w3 product
//                 -> swiglu -> x' = x + wo att + w2 (...)
//   classifier:   x -> rmsnorm -> wcls -> logits
// Attention over the KV cache runs between the first two, outside any graph.
#pragma once

#include "graph.hpp"
#include "llama/config.hpp"
#include "llama/legacy_weights.hpp"
#include "stacked_weights.hpp"

namespace llama::graph {

Graph attention_in_graph(const Config& c, const LayerTensors& w, const StackedLayer& s,
                         int64_t tokens);
Graph feed_forward_graph(const Config& c, const LayerTensors& w, const StackedLayer& s,
                         int64_t tokens);
// `w` supplies rms_final, `wcls` the classifier (the backend's copy).
Graph classifier_graph(const Config& c, const TransformerWeights& w, std::span<const float> wcls,
                       int64_t tokens);

// The same for Q8_0 weights (layer_graphs_q8.cpp): runq.c's steps, int8 products
// on quantized activations; `norms` supplies the f32 RMSNorm gains.
Graph attention_in_graph_q8(const Config& c, const LayerTensors& norms,
                            const QuantizedLayerTensors& w, int64_t group_size, int64_t tokens);
Graph feed_forward_graph_q8(const Config& c, const LayerTensors& norms,
                            const QuantizedLayerTensors& w, int64_t group_size, int64_t tokens);
Graph classifier_graph_q8(const Config& c, const TransformerWeights& w, const QuantizedTensor& wcls,
                          int64_t tokens);

}  // namespace llama::graph
