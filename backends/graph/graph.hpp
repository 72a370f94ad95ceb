// The graph IR: a builder of SSA values (each defined once, with a shape) for the
// position-independent work of a transformer layer. Activations are [tokens, width]
// (one row per token; tokens is fixed per graph); weights are [rows, cols] matrices
// or [n] vectors viewed in place, never copied: f32 ones, or typed tensors in
// any dtype with core product kernels (kernels/dispatch/product_table.hpp).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "llama/kernels/dispatch/product_table.hpp"
#include "llama/tensor.hpp"

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
  // Typed weights (the core's product kernels, typed_ops.cpp) and runq.c's numerics:
  rmsnorm_fma,   // rmsnorm with runq.c's f32 FMA sum of squares (llama::q8::rmsnorm)
  quantize,      // f32 x -> x in a quantized InputFormat (i8 values + f32 scales per group)
  matvec_typed,  // y = x W^T for typed W, x f32 or quantized as W's dtype reads it
  // f32 x -> bf16 in the fast path's layout (rows for onednn-bf16, tiles for
  // amx-bf16): fast numerics' batch input for bf16 weights, rounded once for
  // every product reading x (kernels/products/half_products.hpp Bf16BatchView).
  round_bf16,
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
  Tensor tensor;                // typed weights (non-empty marks them)
  InputFormat format;           // typed weights: what their products read; quantize: its output
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
  // A typed matrix [rows, cols] (tensor.rows(), tensor.cols()), viewed in place;
  // its dtype must have core product kernels.
  // The products' input format is input_format(tensor, numerics).
  ValueId weight_typed(const std::string& name, const Tensor& tensor,
                       Numerics numerics = Numerics::exact);
  ValueId matvec(ValueId w, ValueId x);
  // eps: float(Config::norm_eps).
  ValueId rmsnorm(ValueId x, ValueId w, float eps);
  ValueId rmsnorm_fma(ValueId x, ValueId w, float eps);
  // A quantized value: only matvec_typed reads it.
  ValueId quantize(ValueId x, const InputFormat& format);
  // x rounded to bf16: only matvec_typed with bf16 weights reads it.
  ValueId round_bf16(ValueId x);
  // x: quantized in w's format when w's products want that, rounded to bf16
  // (round_bf16) for bf16 weights, else f32.
  ValueId matvec_typed(ValueId w, ValueId x);
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
