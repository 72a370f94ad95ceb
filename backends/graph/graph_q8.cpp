// Graph builder, Q8_0 part: int8 weights viewed in place, the quantize op that
// turns an f32 activation into a quantized value (i8 values + f32 scales per
// group), the int8 matrix-vector product, and RMSNorm in runq.c's arithmetic.
#include "graph.hpp"
#include "llama/error.hpp"

namespace llama::graph {

ValueId Graph::weight_q8(const std::string& name, const QuantizedTensor& data, int64_t rows,
                         int64_t cols) {
  const int64_t gs = data.group_size;
  if (rows < 1 || cols < 1 || gs < 1 || cols % gs != 0 ||
      data.values.size() != static_cast<size_t>(rows) * static_cast<size_t>(cols) ||
      data.scales.size() != static_cast<size_t>(rows) * static_cast<size_t>(cols / gs)) {
    throw Error("graph: Q8_0 weight " + name + " holds " + std::to_string(data.values.size()) +
                " values and " + std::to_string(data.scales.size()) + " scales, not [" +
                std::to_string(rows) + "x" + std::to_string(cols) + "] in groups of " +
                std::to_string(gs));
  }
  Node n;
  n.op = Op::weight;
  n.rows = rows;
  n.cols = cols;
  n.name = name;
  n.qdata = data;
  n.group_size = gs;
  return push(std::move(n));
}

ValueId Graph::rmsnorm_fma(ValueId x, ValueId w, float eps) {
  const ValueId v = rmsnorm(x, w, eps);
  nodes_.back().op = Op::rmsnorm_fma;
  return v;
}

ValueId Graph::quantize(ValueId x, int64_t group_size) {
  const Node& xn = activation(x, "quantize");
  if (group_size < 1 || xn.cols % group_size != 0) {
    throw Error("graph: quantize of width " + std::to_string(xn.cols) + " by groups of " +
                std::to_string(group_size));
  }
  Node n;
  n.op = Op::quantize;
  n.rows = tokens_;
  n.cols = xn.cols;
  n.args = {x};
  n.group_size = group_size;
  return push(std::move(n));
}

ValueId Graph::matvec_q8(ValueId w, ValueId xq) {
  const Node& wn = node(w);
  const Node& xn = node(xq);
  if (xn.op != Op::quantize) {
    throw Error("graph: matvec_q8 needs a quantized activation, %" + std::to_string(xq) +
                " is not");
  }
  if (wn.op != Op::weight || wn.group_size < 1 || wn.group_size != xn.group_size ||
      wn.cols != xn.cols) {
    throw Error("graph: matvec_q8 needs a Q8_0 matrix [rows x " + std::to_string(xn.cols) +
                "] in groups of " + std::to_string(xn.group_size) + ", got %" + std::to_string(w));
  }
  Node n;
  n.op = Op::matvec_q8;
  n.rows = tokens_;
  n.cols = wn.rows;
  n.args = {w, xq};
  return push(std::move(n));
}

}  // namespace llama::graph
