// Graph builder, typed-weights part: tensors in any dtype with core product
// kernels viewed in place, the quantize op that turns an f32 activation into
// the input format such a product reads (i8 values + f32 scales per group),
// the round_bf16 op (fast numerics' bf16 batch input), the typed
// matrix-vector product, and RMSNorm in runq.c's arithmetic.
#include "graph.hpp"
#include "llama/error.hpp"

namespace llama::graph {

ValueId Graph::weight_typed(const std::string& name, const Tensor& tensor, Numerics numerics) {
  if (tensor.shape.size() != 2) {
    throw Error("graph: typed weight " + name + " is " + tensor.shape_string() + ", not a matrix");
  }
  Node n;
  n.op = Op::weight;
  n.rows = tensor.rows();
  n.cols = tensor.cols();
  n.name = name;
  n.format = input_format(tensor, numerics);  // throws for a dtype without core kernels
  n.tensor = tensor;
  return push(std::move(n));
}

ValueId Graph::rmsnorm_fma(ValueId x, ValueId w, float eps) {
  const ValueId v = rmsnorm(x, w, eps);
  nodes_.back().op = Op::rmsnorm_fma;
  return v;
}

ValueId Graph::quantize(ValueId x, const InputFormat& format) {
  const Node& xn = activation(x, "quantize");
  if (!format.quantized() || format.group_size < 1 || xn.cols % format.group_size != 0) {
    throw Error("graph: quantize of width " + std::to_string(xn.cols) + " as " + to_string(format));
  }
  Node n;
  n.op = Op::quantize;
  n.rows = tokens_;
  n.cols = xn.cols;
  n.args = {x};
  n.format = format;
  return push(std::move(n));
}

ValueId Graph::round_bf16(ValueId x) {
  const Node& xn = activation(x, "round_bf16");
  Node n;
  n.op = Op::round_bf16;
  n.rows = tokens_;
  n.cols = xn.cols;
  n.args = {x};
  return push(std::move(n));
}

ValueId Graph::matvec_typed(ValueId w, ValueId x) {
  const Node& wn = node(w);
  const Node& xn = node(x);
  if (wn.op != Op::weight || wn.tensor.empty()) {
    throw Error("graph: matvec_typed needs a typed weight, %" + std::to_string(w) + " is not");
  }
  const bool quantized = xn.op == Op::quantize;
  const bool rounded = xn.op == Op::round_bf16;
  if (xn.op == Op::weight || wn.cols != xn.cols || quantized != wn.format.quantized() ||
      (quantized && xn.format != wn.format) || (rounded && wn.tensor.dtype != DType::bf16)) {
    throw Error("graph: matvec_typed with " + wn.tensor.describe() + " needs an input [" +
                std::to_string(wn.cols) + "] as " + to_string(wn.format) + ", got %" +
                std::to_string(x));
  }
  Node n;
  n.op = Op::matvec_typed;
  n.rows = tokens_;
  n.cols = wn.rows;
  n.args = {w, x};
  return push(std::move(n));
}

}  // namespace llama::graph
