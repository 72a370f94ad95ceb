// The graph backend's own copy of every matrix decode streams, in one block of
// huge pages (huge_page_buffer.hpp): per layer wq, wk, wv stacked into one
// [q_dim + 2 kv_dim, dim] matrix and w1, w3 into one [2 hidden_dim, dim], so each
// layer's projections are one pass over memory; wo and w2; and the classifier.
// Made once at prepare; the plans read the copies, never the originals.
#pragma once

#include <span>
#include <vector>

#include "copy_writer.hpp"
#include "huge_page_buffer.hpp"
#include "llama/config.hpp"
#include "llama/legacy_weights.hpp"

namespace llama::graph {

struct StackedLayer {
  std::span<const float> wqkv;  // f32 [q_dim + 2 kv_dim, dim]: rows of wq, then wk, then wv
  std::span<const float> w13;   // f32 [2 hidden_dim, dim]: rows of w1, then w3
  std::span<const float> wo;    // f32 [dim, q_dim]
  std::span<const float> w2;    // f32 [dim, hidden_dim]
};

class StackedWeights {
 public:
  StackedWeights() = default;
  // Copies every layer of `weights` (any layout, f32) and the classifier.
  // `copied` is called with each piece of an original right after it has been
  // copied, so the caller can drop its pages before the next is read.
  // `run_parts` runs the copy's parts (the classifier, then one per layer),
  // possibly at once on several threads; `copied` must then be thread-safe.
  // Throws Error on a tensor whose size does not match `config`.
  StackedWeights(const TransformerWeights& weights, const Config& config, const CopiedFn& copied,
                 const PartsFn& run_parts = run_parts_in_order);

  // Floats the copies of a model of this shape take (overflow-checked).
  static int64_t floats(const Config& config);

  const StackedLayer& layer(int64_t l) const { return layers_.at(static_cast<size_t>(l)); }
  std::span<const float> classifier() const { return classifier_; }  // f32 [vocab_size, dim]
  size_t bytes() const { return storage_.span().size_bytes(); }

 private:
  HugePageArray<float>
      storage_;  // f32 [floats(config)]: layer 0 wqkv, w13, wo, w2, layer 1 ..., wcls
  std::vector<StackedLayer> layers_;
  std::span<const float> classifier_;
};

}  // namespace llama::graph
