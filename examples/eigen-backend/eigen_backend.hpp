// The eigen backend: run.c's forward pass with Eigen's matrix-vector products for
// decode and matrix-matrix products for the prompt (forward_batch) and for several
// sequences in one call (forward_runs), on f32 weights read in place from the mapped
// checkpoint. The vector steps (RMSNorm, rotary embedding, attention, SwiGLU) are the
// core's kernels, which every backend shares.
#pragma once

#include <tbb/task_arena.h>

#include <Eigen/Core>
#include <functional>
#include <memory>
#include <vector>

#include "llama/backend.hpp"
#include "llama/kernels/steps/rope.hpp"
#include "llama/kv_cache.hpp"
#include "llama/sequence_runs.hpp"

namespace eigen_backend {

// A row-major f32 matrix in place: the weights as the checkpoint stores them.
using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMatrixMap = Eigen::Map<const RowMatrix>;

// A weight matrix f32 [rows, cols] in the mapping; map() views it for Eigen (free).
struct Matrix {
  const float* data = nullptr;
  int64_t rows = 0, cols = 0;
  ConstMatrixMap map() const { return ConstMatrixMap(data, rows, cols); }
};

class EigenBackend final : public llama::InferenceBackend {
 public:
  explicit EigenBackend(const llama::BackendOptions& options);

  std::string name() const override { return "eigen"; }
  llama::DTypeSet supported_dtypes() const override { return {llama::DType::f32}; }
  void prepare(const llama::Model& model) override;
  std::span<const float> forward(int32_t token, int64_t pos) override;
  std::span<const float> forward_batch(std::span<const int32_t> tokens, int64_t start_pos,
                                       bool all_logits = false) override;
  // Several sequences natively (eigen_runs.cpp): BackendOptions::sequences of them, a KV
  // cache each, every run of a call in one activation matrix.
  int32_t sequences() const override { return options_.sequences; }
  std::span<const float> forward_runs(std::span<const llama::SequenceRun> runs) override;
  // Not claimed: Eigen's matrix-matrix product blocks a row's sums by the shape of the
  // product, so a row's last bits may change with the rows sharing a call.
  bool batch_invariant() const override { return false; }
  std::string describe() const override;

 private:
  // The weights of one layer as Eigen maps over the mapped checkpoint.
  struct Layer {
    std::span<const float> attention_norm, ffn_norm;  // f32 [dim]
    Matrix wq, wk, wv, wo, w1, w2, w3;                // f32 [out, in] each
  };

  // Products (eigen_products.cpp), rows split across the backend's threads.
  // y[rows] = W[rows, cols] x[cols]
  void matvec(std::span<float> y, const Matrix& w, std::span<const float> x);
  // C[n, rows] (row stride ldc) = A[n, cols] W[rows, cols]^T (+ C when accumulate)
  void matmul(float* c, int64_t ldc, const float* a, const Matrix& w, int64_t n,
              bool accumulate = false);
  // Calls body(first_row, end_row) for blocks of whole kRowGroup-row groups, a few
  // per thread (one block on the calling thread when the product is small).
  void split_rows(int64_t rows, int64_t work, const std::function<void(int64_t, int64_t)>& body);
  static constexpr int64_t kRowGroup = 16;
  static constexpr int64_t kBlocksPerThread = 4;

  // Grows the prompt state to n tokens (nothing shrinks).
  void reserve_batch(int64_t n);
  // Attention of `n` positions from start_pos, queries in q (rows of q_dim), output in
  // out (rows of q_dim), over the layer's rows of `cache`.
  void attention(llama::KvCache& cache, int64_t layer, int64_t start_pos, int64_t n, const float* q,
                 float* out);
  // Where position pos's new key and value go: the f32 cache's rows, or (an
  // f16 cache) rows of kv_rows_ that store_rows() then rounds into the cache.
  std::span<float> key_row(int64_t layer, int64_t pos);
  std::span<float> value_row(int64_t layer, int64_t pos);
  void store_rows(int64_t layer, int64_t start_pos, int64_t n);

  int threads_;
  llama::BackendOptions options_;  // as created: kv_cache, context
  llama::KvChoice kv_;             // the cache's dtype and why
  std::unique_ptr<tbb::task_arena> arena_;
  llama::Config config_;
  llama::RopeTable rope_;
  float eps_ = 0;  // float(config_.norm_eps)
  bool prepared_ = false;
  std::span<const float> embedding_;   // f32 [vocab_size, dim]
  std::span<const float> final_norm_;  // f32 [dim]
  std::vector<Layer> layers_;
  Matrix classifier_;  // f32 [vocab_size, dim]

  // Run state (prepare allocates it; decode never does).
  std::vector<float> x_;    // f32 [dim] residual stream
  std::vector<float> xb_;   // f32 [max(dim, q_dim)] normed input / attention output
  std::vector<float> xb2_;  // f32 [dim]
  std::vector<float> hb_;   // f32 [hidden_dim]
  std::vector<float> hb2_;  // f32 [hidden_dim]
  std::vector<float> q_;    // f32 [q_dim]
  int64_t scores_per_head_ = 0;
  std::vector<float> scores_;  // f32 [n_heads, scores_per_head_] attention scratch per head
  std::vector<float> logits_;  // f32 [vocab_size]
  // One per sequence, kv_.dtype [n_layers, seq_len, kv_dim] keys and values
  // (llama/kv_cache.hpp); forward and forward_batch run sequence 0. A position's rows
  // are written before any read of them, so they start uninitialised (no zero-fill at
  // prepare, and the pages become resident only as positions run).
  std::vector<llama::KvCache> caches_;
  llama::SequenceLengths lengths_;  // the positions each sequence holds
  int64_t rows_start_ = 0;          // f16 cache: the position of kv_rows_'s first row
  std::vector<float> kv_rows_;      // f32 [2, n, kv_dim] f16 cache: new keys, then values
  std::vector<float> cos_, sin_;    // f32 [head_dim / 2] the rotation of one position
  // Decode's double products (eigen_products.cpp): the input, widened once.
  std::vector<double> xd_;  // f64 [max(dim, q_dim, hidden_dim)]

  // Prompt state, grown by forward_batch and forward_runs (n = tokens in the call).
  std::vector<float> bx_;   // f32 [n, dim] residual streams
  std::vector<float> bxb_;  // f32 [n, max(dim, q_dim)] normed inputs / attention outputs
  std::vector<float> bq_;   // f32 [n, q_dim] queries
  std::vector<float> bh1_;  // f32 [n, hidden_dim]
  std::vector<float> bh3_;  // f32 [n, hidden_dim]
  // forward_runs only: new keys and values before they go to their sequences' caches,
  // and the rows whose logits are wanted.
  std::vector<float> bk_, bv_;  // f32 [n, kv_dim]
  std::vector<float> wanted_;   // f32 [logit rows, dim]
};

}  // namespace eigen_backend
