// The graph backend's own copy of a Q8_0 model's int8 matrices and their
// scales, in huge pages (huge_page_buffer.hpp), for the same reason as the f32
// copies (stacked_weights.hpp): decode streams them every token. Not stacked:
// runq.c's step order quantizes per product, and every product keeps its own
// matrix. Made once at prepare.
#pragma once

#include <vector>

#include "copy_writer.hpp"
#include "huge_page_buffer.hpp"
#include "llama/config.hpp"
#include "llama/legacy_weights.hpp"

namespace llama::graph {

class QuantizedCopies {
 public:
  QuantizedCopies() = default;
  // Copies every layer's matrices and the classifier of a Q8_0 `weights`;
  // `copied` gets each piece of an original once it is copied. `run_parts`
  // runs the parts (the classifier, then one per layer), possibly at once on
  // several threads; `copied` must then be thread-safe.
  QuantizedCopies(const TransformerWeights& weights, const Config& config, const CopiedFn& copied,
                  const PartsFn& run_parts = run_parts_in_order);

  // Bytes the copies of `weights` take (overflow-checked).
  static int64_t bytes(const TransformerWeights& weights, const Config& config);

  const QuantizedLayerTensors& layer(int64_t l) const { return layers_.at(static_cast<size_t>(l)); }
  const QuantizedTensor& classifier() const { return classifier_; }
  size_t bytes() const { return values_.span().size_bytes() + scales_.span().size_bytes(); }

 private:
  HugePageArray<int8_t> values_;  // i8: every matrix's values, layer by layer, then wcls
  HugePageArray<float> scales_;   // f32: their group scales in the same order
  std::vector<QuantizedLayerTensors> layers_;
  QuantizedTensor classifier_;
};

}  // namespace llama::graph
