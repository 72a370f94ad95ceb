// The graph IR: a builder of SSA values (each defined once, with a shape) for the
// position-independent work of a transformer layer. Activations are [tokens, width]
// (one row per token; tokens is fixed per graph); weights are [rows, cols] matrices
// or [n] vectors viewed in place, never copied.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "llama/legacy_weights.hpp"

namespace llama::graph {

using ValueId = int64_t;

enum class Op {
  input,       // a value the caller writes before each run
  weight,      // a view of model weights (not in the arena)
  matvec,      // y = x W^T, row by row (one matrix-vector product per token)
  matvec_add,  // y = r + x W^T: a matvec fused with the residual add it feeds (compiler only)
  rmsnorm,     // y = w * x / sqrt(mean(x^2) + eps), per row
  add,         // y = a + b
  swiglu,      // y = silu(a) * b
  slice,       // columns [begin, begin + width) of x, a view without a copy
  // Q8_0 (runq.c's numerics, q8_ops.cpp):
  rmsnorm_fma,  // rmsnorm with runq.c's f32 FMA sum of squares (llama::q8::rmsnorm)
  quantize,     // f32 x -> Q8_0 x per group of group_size (i8 values + f32 scales)
  matvec_q8,    // y = x W^T for a Q8_0 matrix W and a quantized x (int32 sums per group)
};

const char* op_name(Op op);

struct Node {
  Op op = Op::input;
  int64_t rows = 0;  // activations: tokens; weights: matrix rows (1 for a vector)
  int64_t cols = 0;  // activations: width; weights: matrix columns (n for a vector)
  std::vector<ValueId> args;
  std::string name;             // inputs and weights
  std::span<const float> data;  // weights: f32 [rows, cols] or [cols]
  bool vector_weight = false;   // weights: printed as [cols]
  int64_t begin = 0;            // slice: first column
  float eps = 0;                // rmsnorm, rmsnorm_fma
  QuantizedTensor qdata;        // Q8_0 weights: i8 [rows, cols] + f32 scales
  int64_t group_size = 0;       // Q8_0 weights and quantize values (> 0 marks them)
};

struct GraphOutput {
  std::string name;
  ValueId value;
};

class Graph {
 public:
  explicit Graph(int64_t tokens = 1);

  ValueId input(const std::string& name, int64_t width);
  // A matrix f32 [rows, cols], row-major (y = W x).
  ValueId weight(const std::string& name, std::span<const float> data, int64_t rows, int64_t cols);
  // A vector f32 [n] (RMSNorm gains).
  ValueId weight_vector(const std::string& name, std::span<const float> data);
  // A Q8_0 matrix [rows, cols], row-major, viewed in place.
  ValueId weight_q8(const std::string& name, const QuantizedTensor& data, int64_t rows,
                    int64_t cols);
  ValueId matvec(ValueId w, ValueId x);
  // eps: float(Config::norm_eps).
  ValueId rmsnorm(ValueId x, ValueId w, float eps);
  ValueId rmsnorm_fma(ValueId x, ValueId w, float eps);
  // A quantized value: only matvec_q8 reads it.
  ValueId quantize(ValueId x, int64_t group_size);
  ValueId matvec_q8(ValueId w, ValueId xq);
  ValueId add(ValueId a, ValueId b);
  ValueId swiglu(ValueId gate, ValueId up);
  ValueId slice(ValueId x, int64_t begin, int64_t width);
  void output(const std::string& name, ValueId v);

  int64_t tokens() const { return tokens_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  const Node& node(ValueId v) const;
  const std::vector<GraphOutput>& outputs() const { return outputs_; }

 private:
  ValueId push(Node n);
  const Node& activation(ValueId v, const char* what) const;

  int64_t tokens_;
  std::vector<Node> nodes_;  // indexed by ValueId, in definition order
  std::vector<GraphOutput> outputs_;
};

}  // namespace llama::graph
