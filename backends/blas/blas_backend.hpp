// The BLAS backend: run.c's forward pass, f32 matrix products through
// OpenBLAS's sgemv/sgemm reading the weights in place (bf16 and f16 widened to
// f32 at prepare), products of other dtypes through the core's kernels
// (kernels/dispatch/product_table.hpp), rows split across a oneTBB arena; attention split
// across heads. One forward pass for every dtype: the per-matrix choice and
// the step arithmetic (run.c's or runq.c's) are made at prepare.
#pragma once

#include <tbb/task_arena.h>

#include <initializer_list>
#include <memory>
#include <vector>

#include "llama/backend.hpp"
#include "llama/f32_weights.hpp"
#include "llama/kernels/dispatch/product_table.hpp"
#include "llama/kernels/dispatch/step_table.hpp"
#include "llama/kernels/steps/rope.hpp"
#include "llama/kv_cache.hpp"
#include "llama/sequence_runs.hpp"
#include "llama/uninitialized_array.hpp"

namespace llama::blas {

class BlasBackend final : public InferenceBackend {
 public:
  explicit BlasBackend(const BackendOptions& options);

  std::string name() const override { return "blas"; }
  DTypeSet supported_dtypes() const override;
  void prepare(const Model& model) override;
  std::span<const float> forward(int32_t token, int64_t pos) override;
  // Prompt processing with matrix-matrix products: every weight matrix is
  // read once per batch.
  std::span<const float> forward_batch(std::span<const int32_t> tokens, int64_t start_pos,
                                       bool all_logits = false) override;
  // Several sequences natively (blas_runs.cpp): every run's tokens in one
  // activation matrix, so each weight matrix is read once per call.
  int32_t sequences() const override { return options_.sequences; }
  std::span<const float> forward_runs(std::span<const SequenceRun> runs) override;
  bool batch_invariant() const override;
  std::string describe() const override;

 private:
  // A weight matrix [rows, cols]: f32 values for sgemv/sgemm (float dtypes),
  // or the tensor itself for the core's product kernels.
  struct Matrix {
    std::span<const float> f32;  // f32 [rows, cols] in place (f32 weights only)
    Tensor tensor;
    InputFormat input;  // kind f32 for f32 values
    int64_t rows = 0, cols = 0;
    bool core() const { return f32.empty(); }
  };
  // Which product a batch of f32 weights takes: OpenBLAS's sgemm (forward_batch),
  // or under exact numerics the core's f32 GEMM, whose sums do not depend on the
  // batch's shape (forward_runs: batch_invariant()).
  enum class F32Gemm { sgemm, core };
  struct Layer {
    std::span<const float> attention_norm, ffn_norm;  // f32 [dim]
    Matrix wq, wk, wv, wo, w1, w2, w3;
  };
  Matrix matrix(const Tensor& t);

  void attention(int64_t layer, int64_t pos);
  void batch_attention(int64_t layer, int64_t start_pos, int64_t n);
  // forward_runs on at most kRunsChunk tokens: the wanted rows' logits to
  // `logits` (f32 [logit_rows(runs), vocab]).
  static constexpr int64_t kRunsChunk = 512;
  void runs_chunk(std::span<const SequenceRun> runs, float* logits);
  // The attention of every run of a chunk over its own sequence's cache.
  void runs_attention(int64_t layer, std::span<const SequenceRun> runs);
  // The rest of a layer for rows [0, n) once attention has written bxb_: wo and the
  // residual, ffn_norm, w1/w3, SwiGLU, w2 and the residual (blas_batch.cpp).
  void layer_tail(const Layer& w, int64_t n, F32Gemm f32);
  // Grows the batch state to n tokens (nothing shrinks).
  void reserve_batch(int64_t n);
  // Products (blas_products.cpp), rows split across the arena.
  // y[rows] = W x
  void product(std::span<float> y, const Matrix& w, InputCache& x);
  // Several products of one input (wq/wk/wv, w1/w3) as one split across the
  // arena: one hand-off to the threads instead of one per matrix.
  struct Output {
    std::span<float> y;  // f32 [w->rows]
    const Matrix* w;
  };
  void products(std::initializer_list<Output> outs, InputCache& x);
  // Y[n, rows] (row stride ldy) = X W^T, or += with `accumulate`; f32 weights
  // through `f32`.
  void product_batch(float* y, int64_t ldy, const Matrix& w, BatchInputCache& x, int64_t n,
                     bool accumulate, F32Gemm f32);
  // Several batch products of one input (wq/wk/wv, w1/w3) as one split across
  // the arena. Y [n, w->rows] at row stride ldy; accumulate (Y +=) only where
  // sgemm runs (its beta), product_batch adds the others' sums itself.
  struct BatchOutput {
    float* y;
    int64_t ldy;
    const Matrix* w;
    bool accumulate = false;
  };
  void product_batches(std::initializer_list<BatchOutput> outs, BatchInputCache& x, int64_t n,
                       F32Gemm f32);
  // Blocks hold whole groups of kRowGroup rows, the rows the kernels sum alike
  // whatever the split (f32 GEMM blocks: whole packed panels, kGemmRowUnit).
  static constexpr int64_t kRowGroup = 16;

  int threads_;
  Numerics numerics_;       // BackendOptions::numerics: fast lets bf16 batches round inputs
  BackendOptions options_;  // as created: kv_cache, context
  KvChoice kv_;             // the cache's dtype and why
  std::unique_ptr<tbb::task_arena> arena_;
  Config config_;
  RopeTable rope_;
  float eps_ = 0;  // float(config_.norm_eps)
  StepKernels steps_{};
  KernelSet kernel_ = KernelSet::portable;  // for core products
  F32Weights f32_;                          // norms as f32 (bf16/f16 ones widened)
  Tensor embedding_;
  std::vector<Layer> layers_;
  std::span<const float> final_norm_;  // f32 [dim]
  Matrix classifier_;
  bool prepared_ = false;

  // Run state.
  std::vector<float> x_;     // f32 [dim] residual stream
  std::vector<float> xb_;    // f32 [max(dim, q_dim)] normed input / attention output
  std::vector<float> xb2_;   // f32 [dim]
  std::vector<float> hb_;    // f32 [hidden_dim]
  std::vector<float> hb2_;   // f32 [hidden_dim]
  std::vector<float> q_;     // f32 [q_dim]
  int64_t att_scratch_ = 0;  // floats of att_ per head
  std::vector<float>
      att_;  // f32 [n_heads, seq_len] (f16 cache: [n_heads, attend_f16_scratch_floats])
  std::vector<float> logits_;  // f32 [vocab_size]
  // One per sequence, kv_.dtype [n_layers, seq_len, kv_dim] keys and values;
  // forward and forward_batch run sequence 0.
  std::vector<KvCache> caches_;
  SequenceLengths lengths_;           // positions each sequence holds
  std::vector<float> k_row_, v_row_;  // f32 [kv_dim]: an f16 cache's new row before storing
  std::vector<float> rope_cos_;       // f32 [head_dim / 2]
  std::vector<float> rope_sin_;       // f32 [head_dim / 2]
  InputCache in_;                     // the input of the next products, quantized once
  // The row blocks of one products() call (reserved at prepare: nothing is
  // allocated per token).
  struct RowBlock {
    std::span<float> y;  // f32 [r1 - r0]
    const Matrix* w;
    const ProductInput* x;
    int64_t r0, r1;
  };
  std::vector<RowBlock> blocks_;
  // The row blocks of one product_batches() call: rows [r0, r1) of Y [n, w->rows].
  struct BatchBlock {
    float* y;
    int64_t ldy;
    bool accumulate;
    const Matrix* w;
    const ProductBatch* x;
    int64_t r0, r1;
  };
  std::vector<BatchBlock> batch_blocks_;

  // Batch state, grown on demand by forward_batch (n = tokens in the batch).
  std::vector<float> bx_;         // f32 [n, dim] residual streams
  std::vector<float> bxb_;        // f32 [n, max(dim, q_dim)] normed input / attention output
  std::vector<float> bq_;         // f32 [n, q_dim]
  std::vector<float> bh1_;        // f32 [n, hidden_dim]
  std::vector<float> bh3_;        // f32 [n, hidden_dim]
  std::vector<float> bsum_;       // f32 [n, dim]: core products of wo and w2 before they are added
  std::vector<float> bk_, bv_;    // f32 [n, kv_dim]: an f16 cache's new rows before storing
  BatchInputCache bin_;           // the batch's next input, quantized once
  int64_t batch_capacity_ = 0;    // tokens the batch state holds
  std::vector<int64_t> row_pos_;  // i64 [n]: a forward_runs row's position
  std::vector<SequenceRun> pieces_;  // forward_runs: the current chunk's runs
  // forward_runs' attention: one job per (run, block of queries), and scratch per
  // arena thread (run_scratch_floats_ each: the most a block over seq_len needs).
  struct AttentionJob {
    int64_t run, row, pos, m, keys;  // queries [row, row + m) at positions pos..
    int64_t h0, h1;                  // heads [h0, h1)
  };
  std::vector<AttentionJob> jobs_;
  int64_t run_scratch_floats_ = 0;
  UninitializedArray<float> run_scratch_;  // f32 [threads, run_scratch_floats_]
  std::vector<float> wanted_;              // f32 [logit rows, dim]: rows whose logits are wanted
};

}  // namespace llama::blas
