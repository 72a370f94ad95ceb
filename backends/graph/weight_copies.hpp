// The graph backend's own copy of every matrix decode streams, in huge pages
// (huge_page_buffer.hpp), made once at prepare; the plans read the copies,
// never the originals. Matrices are stacked per layer: wq, wk, wv into one
// [q_dim + 2 kv_dim, dim] matrix and w1, w3 into one [2 hidden_dim, dim] when
// the group shares one dtype that is f32 (the f32 copy) or one whose rows
// hold their own scales, bf16, f16 or a GGUF block type (their bytes back to
// back in the typed copy, never widened), so each layer's projections are one
// product: one pass over memory, one packing of the input, one hand-off to
// the threads. A typed group stacks in every layer or in none (every layer
// runs one plan layout). A product's row results never depend on the rows
// around it, so a stacked product's slices are the separate products' bits.
// Q8_0 matrices are copied byte for byte (values, then scales) for the core's
// product kernels, and never stacked.
#pragma once

#include <span>
#include <vector>

#include "copy_writer.hpp"
#include "huge_page_buffer.hpp"
#include "llama/config.hpp"
#include "llama/weights.hpp"

namespace llama::graph {

// One matrix of the copy: f32 values, or a typed tensor viewing the copy.
struct MatrixCopy {
  std::span<const float> f32;  // f32 [rows, cols] for f32 weights
  Tensor tensor;               // other dtypes: the copy, typed as the original
  bool typed() const { return !tensor.empty(); }
  bool empty() const { return f32.empty() && tensor.empty(); }
};

struct LayerCopy {
  // The stacked groups, empty when not stacked: f32 (.f32) or bf16/f16/GGUF
  // blocks (.tensor, named "wqkv[l]" / "w13[l]") as the group's dtype.
  MatrixCopy wqkv;  // [q_dim + 2 kv_dim, dim]: wq's rows, then wk's, then wv's
  MatrixCopy w13;   // [2 hidden_dim, dim]: w1's rows, then w3's
  // Every matrix (views into wqkv and w13 when stacked).
  MatrixCopy wq, wk, wv, wo, w1, w2, w3;
};

class WeightCopies {
 public:
  WeightCopies() = default;
  // Copies every layer's matrices and the classifier of `weights` (validated
  // against `config`). `copied` is called with each piece of an original right
  // after it has been copied, so the caller can drop its pages before the next
  // is read. `run_parts` runs the parts (the classifier, then one per layer),
  // possibly at once on several threads; `copied` must then be thread-safe.
  // Throws Error on a tensor whose size does not match `config`.
  WeightCopies(const ModelWeights& weights, const Config& config, const CopiedFn& copied,
               const PartsFn& run_parts = run_parts_in_order);

  // Bytes the copies of `weights` take (overflow-checked).
  static int64_t bytes(const ModelWeights& weights, const Config& config);

  const LayerCopy& layer(int64_t l) const { return layers_.at(static_cast<size_t>(l)); }
  const MatrixCopy& classifier() const { return classifier_; }
  size_t f32_bytes() const { return floats_.span().size_bytes(); }
  size_t typed_bytes() const { return typed_.span().size_bytes(); }
  size_t bytes() const { return f32_bytes() + typed_bytes(); }

 private:
  HugePageArray<float> floats_;     // f32: layer 0's float matrices, layer 1's ..., wcls
  HugePageArray<std::byte> typed_;  // typed copies in the same order, 64-byte aligned
  std::vector<LayerCopy> layers_;
  MatrixCopy classifier_;
};

}  // namespace llama::graph
