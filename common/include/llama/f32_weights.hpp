// f32 views of a model's RMSNorm gains for backends whose steps read f32
// vectors: f32 tensors in place, bf16 and f16 ones widened exactly
// (kernels/numbers/half.hpp) into memory this object owns, once at prepare (a few KiB:
// one vector per norm). Matrices are never widened: bf16/f16 ones are read in
// place by the core's product kernels (kernels/dispatch/product_table.hpp). The backend
// counts norm_copy_bytes in its memory check before anything is copied.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "llama/tensor.hpp"
#include "llama/weights.hpp"

namespace llama {

class F32Weights {
 public:
  // Bytes a widened copy of `t` takes: 0 for f32, 4 x elements for bf16 and
  // f16 (overflow-checked). Throws Error for a dtype that is not a float type.
  static int64_t copy_bytes(const Tensor& t);
  // What view() copies for a model's norms (the embedding is read a row at a
  // time by embedding_row and never copied).
  static int64_t norm_copy_bytes(const ModelWeights& w);

  // `t`'s values as f32: the tensor itself, or a copy made on the first call
  // and kept (the same span every call for the same tensor data).
  std::span<const float> view(const Tensor& t);

  int64_t copied_bytes() const { return copied_bytes_; }
  void clear();

 private:
  struct Copy {
    const std::byte* source;
    std::unique_ptr<float[]> values;
    size_t size;
  };
  std::vector<Copy> copies_;
  int64_t copied_bytes_ = 0;
};

}  // namespace llama
