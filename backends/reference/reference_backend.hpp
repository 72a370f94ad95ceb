// The reference backend: the forward pass in plain loops, read top to bottom
// like run.c, accumulating every sum in double; no threads, no BLAS. It is the
// oracle of the conformance suite and the template for a new backend. Weights
// in a float dtype run as f32 (bf16 and f16 widened exactly at prepare);
// llama2.c's Q8_0 weights run runq.c's int8 products through the core's
// portable kernel, with runq.c's f32 steps (kernels/dispatch/step_table.hpp).
#pragma once

#include <vector>

#include "llama/backend.hpp"
#include "llama/f32_weights.hpp"
#include "llama/kernels/dispatch/product_table.hpp"
#include "llama/kernels/dispatch/step_table.hpp"
#include "llama/kernels/steps/rope.hpp"
#include "llama/kv_cache.hpp"

namespace llama::reference {

class ReferenceBackend final : public InferenceBackend {
 public:
  explicit ReferenceBackend(const BackendOptions& options = {}) : options_(options) {}
  std::string name() const override { return "reference"; }
  DTypeSet supported_dtypes() const override;
  void prepare(const Model& model) override;
  std::span<const float> forward(int32_t token, int64_t pos) override;
  int32_t sequences() const override { return options_.sequences; }
  std::span<const float> forward_runs(std::span<const SequenceRun> runs) override;
  // One position at a time, each sum in double: nothing depends on what shares a call.
  bool batch_invariant() const override { return true; }
  std::string describe() const override;

 private:
  // A weight matrix [rows, cols] as this backend runs it: f32 values summed
  // in double, or (a dtype with core product kernels) the tensor itself.
  struct Matrix {
    std::span<const float> f32;  // f32 [rows, cols] when the dtype is f32
    Tensor tensor;               // the weights as loaded (bf16/f16: read in place)
    InputFormat input;           // what a core product reads (kind f32 for float weights)
    int64_t rows = 0, cols = 0;
  };
  struct Layer {
    std::span<const float> attention_norm, ffn_norm;  // f32 [dim]
    Matrix wq, wk, wv, wo, w1, w2, w3;
  };
  Matrix matrix(const Tensor& t);
  // out[rows] = W x: in double for f32 values and for bf16/f16 ones (each row
  // upcast exactly into row_), else x quantized as the weights want and the
  // core's portable product kernel.
  void matmul(std::span<float> out, const Matrix& w, std::span<const float> x);
  void rmsnorm(std::span<float> out, std::span<const float> x, std::span<const float> w);
  void rope(std::span<float> v);
  void attention(int64_t layer, int64_t pos);
  // attention() over an f16 cache: ggml's rounding points (kernels/steps/f16_cache_attention.hpp).
  void attention_f16(int64_t layer, int64_t pos);
  void swiglu();
  // One token at `pos` of sequence current_; the logits are logits_.
  std::span<const float> step(int32_t token, int64_t pos);
  KvCache& cache() { return caches_[size_t(current_)]; }
  const KvCache& cache() const { return caches_[size_t(current_)]; }

  BackendOptions options_;  // as created: kv_cache, context
  KvChoice kv_;             // the cache's dtype and why
  Config config_;
  RopeTable rope_;
  StepArithmetic arithmetic_ = StepArithmetic::run_c;
  F32Weights f32_;  // norms as f32 (bf16/f16 ones widened)
  Tensor embedding_;
  std::vector<Layer> layers_;
  std::span<const float> final_norm_;  // f32 [dim]
  Matrix classifier_;
  bool prepared_ = false;

  std::vector<float> x_;         // f32 [dim] residual stream
  std::vector<float> xb_;        // f32 [max(dim, q_dim)] normed input / attention output
  std::vector<float> q_;         // f32 [q_dim]
  std::vector<float> att_;       // f32 [seq_len] scores of one head
  std::vector<float> att16_;     // f32 [attend_f16_scratch_floats]: an f16 cache's scratch
  std::vector<float> hb_;        // f32 [hidden_dim]
  std::vector<float> hb2_;       // f32 [hidden_dim]
  std::vector<float> tmp_;       // f32 [dim]
  std::vector<float> logits_;    // f32 [vocab_size]
  std::vector<KvCache> caches_;  // per sequence: kv_.dtype [n_layers, seq_len, kv_dim] keys, values
  SequenceLengths lengths_;      // the positions each sequence holds
  int32_t current_ = 0;          // the sequence step() runs
  std::vector<float> k_row_;     // f32 [kv_dim]: an f16 cache's new key before it is stored
  std::vector<float> v_row_;     // f32 [kv_dim]: and its value
  std::vector<float> rope_cos_;  // f32 [head_dim / 2] angles of the position
  std::vector<float> rope_sin_;  // f32 [head_dim / 2]
  std::vector<int8_t> xq_;       // i8 [max width]: a quantized input
  std::vector<float> xq_scales_;  // f32 [max width]: its scales
  std::vector<float> row_;        // f32 [max width]: one bf16/f16 weight row upcast
};

}  // namespace llama::reference
