// The BLAS backend: run.c's forward pass, matrix-vector products through
// OpenBLAS's sgemv reading the weights in place (flat layout), attention
// split across heads with oneTBB.
#pragma once

#include <tbb/task_arena.h>

#include <functional>
#include <memory>
#include <vector>

#include "llama/backend.hpp"
#include "llama/kernels/q8.hpp"
#include "llama/kernels/rope.hpp"
#include "llama/uninitialized_array.hpp"

namespace llama::blas {

class BlasBackend final : public InferenceBackend {
 public:
  explicit BlasBackend(const BackendOptions& options);

  std::string name() const override { return "blas"; }
  DTypeSet supported_dtypes() const override { return {DType::f32, DType::q8_0}; }
  void prepare(const Model& model) override;
  std::span<const float> forward(int32_t token, int64_t pos) override;
  // Prompt processing with sgemm: every weight matrix is read once per batch.
  std::span<const float> forward_batch(std::span<const int32_t> tokens, int64_t start_pos,
                                       bool all_logits = false) override;
  std::string describe() const override;

 private:
  // One attention head over the cache: llama::attend_head for f32 models,
  // llama::q8::attend_head (runq.c's float steps) for Q8_0 ones.
  using HeadAttention = void (*)(std::span<const float> q, const float* keys, const float* values,
                                 int64_t stride, int64_t n_pos, std::span<float> scores,
                                 std::span<float> out);
  void attention(int64_t layer, int64_t pos, HeadAttention attend);
  void batch_attention(int64_t layer, int64_t start_pos, int64_t n, HeadAttention attend);
  // Q8_0 weights (blas_q8.cpp): runq.c's forward pass with int8 kernels.
  std::span<const float> forward_q8(int32_t token, int64_t pos);
  // Q8_0 prompt batch (blas_q8_batch.cpp): each int8 weight row read once per batch.
  std::span<const float> forward_batch_q8(std::span<const int32_t> tokens, int64_t start_pos,
                                          bool all_logits);
  void q8_matmat(float* out, int64_t out_stride, const QuantizedTensor& w,
                 std::span<const Q8Vector> x);
  void q8_matvec(std::span<float> y, const QuantizedTensor& w, const Q8Vector& x);
  // f32 products (blas_products.cpp), rows split across the arena, each block
  // one single-threaded OpenBLAS call.
  // y[rows] = W[rows, cols] x[cols]
  void matvec(std::span<float> y, std::span<const float> w, std::span<const float> x);
  // C[n, rows] (row stride ldc) = A[n, cols] W[rows, cols]^T + beta C
  void matmul(float* c, int64_t ldc, const float* a, std::span<const float> w, int64_t n,
              int64_t rows, int64_t cols, float beta = 0.0f);
  // Runs body(first_row, end_row) over [0, rows) in blocks of whole 16-row groups.
  void split_rows(int64_t rows, int64_t work, const std::function<void(int64_t, int64_t)>& body);

  int threads_;
  std::unique_ptr<tbb::task_arena> arena_;
  Config config_;
  RopeTable rope_;
  float eps_ = 0;               // float(config_.norm_eps)
  TransformerWeights weights_;  // views into the mapping: flat (f32) or per-layer (Q8_0)
  bool prepared_ = false;

  // Run state.
  std::vector<float> x_;                 // f32 [dim] residual stream
  std::vector<float> xb_;                // f32 [max(dim, q_dim)] normed input / attention output
  std::vector<float> xb2_;               // f32 [dim]
  std::vector<float> hb_;                // f32 [hidden_dim]
  std::vector<float> hb2_;               // f32 [hidden_dim]
  std::vector<float> q_;                 // f32 [q_dim]
  std::vector<float> att_;               // f32 [n_heads, seq_len]
  std::vector<float> logits_;            // f32 [vocab_size]
  UninitializedArray<float> key_cache_;  // f32 [n_layers, seq_len, kv_dim], written before read
  UninitializedArray<float> val_cache_;  // f32 [n_layers, seq_len, kv_dim], written before read
  std::vector<float> rope_cos_;          // f32 [head_dim / 2]
  std::vector<float> rope_sin_;          // f32 [head_dim / 2]
  // Q8_0 run state: activations quantized per group before each product.
  Q8Kernel q8_kernel_ = Q8Kernel::portable;
  Q8Vector xq_;  // i8 [dim], f32 [dim / group_size]
  Q8Vector aq_;  // i8 [q_dim], f32 [q_dim / group_size]: attention output
  Q8Vector hq_;  // i8 [hidden_dim], f32 [hidden_dim / group_size]

  // Batch state, grown on demand by forward_batch (n = tokens in the batch).
  std::vector<float> bx_;      // f32 [n, dim] residual streams
  std::vector<float> bxb_;     // f32 [n, max(dim, q_dim)] normed input / attention output
  std::vector<float> bq_;      // f32 [n, max(dim, q_dim)] queries (Q8_0: then wo's output)
  std::vector<float> bh1_;     // f32 [n, hidden_dim]
  std::vector<float> bh3_;     // f32 [n, hidden_dim]
  std::vector<float> batt_;    // f32 [threads, seq_len] attention scores per worker
  std::vector<Q8Vector> bxq_;  // Q8_0: n quantized rows of bxb_, i8 [dim] + f32 scales each
  std::vector<Q8Vector> baq_;  // Q8_0: n quantized attention outputs, i8 [q_dim] + f32 scales
  std::vector<Q8Vector> bhq_;  // Q8_0: n quantized rows of bh1_, i8 [hidden_dim] + f32 scales
};

}  // namespace llama::blas
