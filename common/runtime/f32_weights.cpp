// Widened copies of bf16 and f16 norm gains, one per distinct tensor.
#include "llama/f32_weights.hpp"

#include "llama/checked_math.hpp"
#include "llama/error.hpp"
#include "llama/kernels/numbers/dequantize.hpp"

namespace llama {

int64_t F32Weights::copy_bytes(const Tensor& t) {
  if (!dtype_info(t.dtype).is_float) {
    throw Error("tensor " + t.name + " is " + to_string(t.dtype) + ", not a float type");
  }
  if (t.dtype == DType::f32) return 0;
  return checked_mul(t.elements(), int64_t{sizeof(float)}, "f32 copy of tensor " + t.name);
}

int64_t F32Weights::norm_copy_bytes(const ModelWeights& w) {
  int64_t total = copy_bytes(w.final_norm);
  for (const LayerWeights& l : w.layers) {
    total = checked_add(total, copy_bytes(l.attention_norm), "f32 copies");
    total = checked_add(total, copy_bytes(l.ffn_norm), "f32 copies");
  }
  return total;
}

std::span<const float> F32Weights::view(const Tensor& t) {
  const int64_t bytes = copy_bytes(t);
  if (t.dtype == DType::f32) return t.f32();
  for (const Copy& c : copies_) {
    if (c.source == t.data.data() && c.size == static_cast<size_t>(t.elements())) {
      return {c.values.get(), c.size};  // a tied classifier is the embedding's copy
    }
  }
  const auto n = static_cast<size_t>(t.elements());
  Copy c{t.data.data(), std::make_unique_for_overwrite<float[]>(n), n};
  dequantize(t, {c.values.get(), n});
  copied_bytes_ += bytes;
  copies_.push_back(std::move(c));
  return {copies_.back().values.get(), n};
}

void F32Weights::clear() {
  copies_.clear();
  copied_bytes_ = 0;
}

}  // namespace llama
