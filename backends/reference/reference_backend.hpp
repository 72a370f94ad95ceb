// The reference backend: the forward pass in plain loops, read top to bottom
// like run.c, accumulating every sum in double; no threads, no BLAS. It is the
// oracle of the conformance suite and the template for a new backend.
#pragma once

#include <vector>

#include "llama/backend.hpp"
#include "llama/kernels/q8.hpp"
#include "llama/kernels/rope.hpp"

namespace llama::reference {

class ReferenceBackend final : public InferenceBackend {
 public:
  std::string name() const override { return "reference"; }
  DTypeSet supported_dtypes() const override { return {DType::f32, DType::q8_0}; }
  void prepare(const Model& model) override;
  std::span<const float> forward(int32_t token, int64_t pos) override;
  std::string describe() const override;

 private:
  // Q8_0 weights (reference_q8.cpp): runq.c's forward pass, read top to bottom,
  // with the portable int8 kernel.
  std::span<const float> forward_q8(int32_t token, int64_t pos);

  Config config_;
  RopeTable rope_;
  TransformerWeights weights_;  // per-layer layout
  bool prepared_ = false;

  std::vector<float> x_;          // f32 [dim] residual stream
  std::vector<float> xb_;         // f32 [max(dim, q_dim)] normed input / attention output
  std::vector<float> q_;          // f32 [q_dim]
  std::vector<float> att_;        // f32 [seq_len] scores of one head
  std::vector<float> hb_;         // f32 [hidden_dim]
  std::vector<float> hb2_;        // f32 [hidden_dim]
  std::vector<float> tmp_;        // f32 [dim]
  std::vector<float> logits_;     // f32 [vocab_size]
  std::vector<float> key_cache_;  // f32 [n_layers, seq_len, kv_dim]
  std::vector<float> val_cache_;  // f32 [n_layers, seq_len, kv_dim]
  Q8Vector xq_;                   // Q8_0 only: i8 [dim], f32 [dim / group_size]
  Q8Vector aq_;                   // Q8_0 only: i8 [q_dim], f32 [q_dim / group_size]
  Q8Vector hq_;                   // Q8_0 only: i8 [hidden_dim], f32 [hidden_dim / group_size]
  std::vector<float> rope_cos_;   // f32 [head_dim / 2] angles of the position
  std::vector<float> rope_sin_;   // f32 [head_dim / 2]
};

}  // namespace llama::reference
