// The graph backend: each layer's position-independent work compiled once at
// prepare into plans (graph IR -> compiler -> arena layout) and replayed per
// token by the executor; attention over the KV cache calls kernels directly,
// split across heads.
#pragma once

#include <memory>
#include <vector>

#include "executor.hpp"
#include "llama/backend.hpp"
#include "llama/f32_weights.hpp"
#include "llama/kernels/dispatch/step_table.hpp"
#include "llama/kernels/steps/rope.hpp"
#include "llama/kv_cache.hpp"
#include "llama/sequence_runs.hpp"
#include "llama/uninitialized_array.hpp"
#include "plan.hpp"
#include "weight_copies.hpp"

namespace llama::graph {

// Every plan for one row count, and the arenas they run in. Plans of the same
// kind share one arena since they run one after another.
struct PlanSet {
  int64_t tokens = 1;
  // Where the backend reads and writes; the same in every layer's plan.
  ArenaRef att_x, q, k, v;           // attention_in: input x, outputs q, k, v
  ArenaRef ffn_x, ffn_att, ffn_out;  // feed_forward: inputs x, att, output x
  ArenaRef cls_x, logits;            // classifier: input x, output logits
  std::vector<Plan> attention_in;    // per layer
  std::vector<Plan> feed_forward;    // per layer
  Plan classifier;
  // Uninitialised: a plan writes every value before reading it, and pages the
  // run never reaches (the batch classifier's, unless all logits are asked
  // for) stay out of the RSS.
  UninitializedArray<float> attention_in_arena;  // f32 [max arena floats of attention_in]
  UninitializedArray<float> feed_forward_arena;  // f32 [max arena floats of feed_forward]
  UninitializedArray<float> classifier_arena;    // f32 [classifier arena floats]
};

class GraphBackend final : public InferenceBackend {
 public:
  explicit GraphBackend(const BackendOptions& options);

  std::string name() const override { return "graph"; }
  DTypeSet supported_dtypes() const override;
  void prepare(const Model& model) override;
  std::span<const float> forward(int32_t token, int64_t pos) override;
  std::span<const float> forward_batch(std::span<const int32_t> tokens, int64_t start_pos,
                                       bool all_logits = false) override;
  // Several sequences natively (graph_runs.cpp): every run's tokens in the rows
  // of the batch plans, so each weight matrix is read once per call.
  int32_t sequences() const override { return options_.sequences; }
  std::span<const float> forward_runs(std::span<const SequenceRun> runs) override;
  bool batch_invariant() const override;
  std::string describe() const override;

  // Rows of the plans forward_batch runs (prompt chunks of at most this many tokens).
  static constexpr int64_t kBatchTokens = 128;

 private:
  // Rows [row, row + n) of x_ are one sequence's positions pos, pos + 1, ...
  struct Segment {
    int32_t sequence = 0;
    int64_t row = 0, pos = 0, n = 0;
    const SequenceRun* from = nullptr;  // forward_runs: the run the rows come from
  };
  PlanSet build_plans(int64_t tokens) const;
  // Runs rows [0, n) of `plans` on x_ (f32 [n, dim]), the rows being the segments'
  // (in row order, covering [0, n)), leaving the residual stream after the last
  // layer in x_. Each segment's keys and values go to its sequence's cache.
  void run_layers(PlanSet& plans, int64_t n, std::span<const Segment> segments);
  // body(t0, t1) over tokens [0, n) in one block per thread (one block for a few tokens).
  template <typename Body>
  void for_token_blocks(int64_t n, const Body& body) const;
  // Each segment's queries (rows of q) over its own sequence's cache into rows of
  // out. `single`: one query alone through attend_head (decode); otherwise every
  // query through attend_queries, whose result for a query does not depend on
  // the others (forward_runs' batch invariance).
  void attention(int64_t layer, std::span<const Segment> segments, bool single, const float* q,
                 int64_t q_ld, float* out, int64_t out_ld);

  Executor exec_;
  Numerics numerics_;       // BackendOptions::numerics: fast lets bf16 batches round inputs
  BackendOptions options_;  // as created: kv_cache, context
  KvChoice kv_;             // the cache's dtype and why
  Config config_;
  StepArithmetic arithmetic_ = StepArithmetic::run_c;  // run.c's, or runq.c's for Q8_0 weights
  StepKernels steps_{};
  Tensor embedding_;  // read a row per token, in place
  F32Weights norms_;  // the RMSNorm gains as f32 (bf16/f16 ones widened)
  std::vector<std::span<const float>> attention_norms_, ffn_norms_;  // f32 [dim] per layer
  std::span<const float> final_norm_;                                // f32 [dim]
  WeightCopies copies_;  // every matrix: f32 (stacked where float) or typed, huge pages
  PlanSet decode_;       // tokens = 1
  PlanSet batch_;        // tokens = kBatchTokens
  bool prepared_ = false;
  size_t released_bytes_ = 0;  // resident bytes of the originals dropped at prepare

  std::vector<float> x_;  // f32 [kBatchTokens, dim] residual stream, one row per token
  // One per sequence, kv_.dtype [n_layers, seq_len, kv_dim] keys and values,
  // written before read; forward and forward_batch run sequence 0.
  std::vector<KvCache> caches_;
  SequenceLengths lengths_;        // positions each sequence holds
  std::vector<Segment> segments_;  // forward_runs: the current chunk's segments
  // A batch's attention work: a decode token's heads [h0, h1), or one head's
  // block of queries (h0 = head).
  struct AttentionTask {
    const Segment* segment = nullptr;
    int64_t h0 = 0, h1 = 0, block = 0;
  };
  std::vector<AttentionTask> attention_tasks_;
  // f32 [n_heads, decode_scratch_] for decode, or per arena thread prompt_scratch_
  // (attend_scratch_floats or attend_f16_scratch_floats over seq_len): written before read
  int64_t decode_scratch_ = 0, prompt_scratch_ = 0;
  UninitializedArray<float> scores_;
  RopeTable rope_;
  std::vector<float> rope_cos_;  // f32 [kBatchTokens, head_dim / 2]
  std::vector<float> rope_sin_;  // f32 [kBatchTokens, head_dim / 2]
};

}  // namespace llama::graph
