// Graph builder: shape checks at construction so a compiled plan never sees a
// mismatched operand.
#include "graph.hpp"

#include "llama/error.hpp"

namespace llama::graph {

const char* op_name(Op op) {
  switch (op) {
    case Op::input:
      return "input";
    case Op::weight:
      return "weight";
    case Op::matvec:
      return "matvec";
    case Op::matvec_add:
      return "matvec_add";
    case Op::rmsnorm:
      return "rmsnorm";
    case Op::add:
      return "add";
    case Op::swiglu:
      return "swiglu";
    case Op::slice:
      return "slice";
    case Op::rmsnorm_fma:
      return "rmsnorm_fma";
    case Op::quantize:
      return "quantize";
    case Op::matvec_typed:
      return "matvec_typed";
    case Op::round_bf16:
      return "round_bf16";
  }
  return "?";
}

Graph::Graph(int64_t tokens) : tokens_(tokens) {
  if (tokens < 1) throw Error("graph: tokens must be >= 1, got " + std::to_string(tokens));
}

const Node& Graph::node(ValueId v) const {
  if (v < 0 || v >= static_cast<ValueId>(nodes_.size())) {
    throw Error("graph: no value %" + std::to_string(v));
  }
  return nodes_[static_cast<size_t>(v)];
}

const Node& Graph::activation(ValueId v, const char* what) const {
  const Node& n = node(v);
  if (n.op == Op::weight) {
    throw Error(std::string("graph: ") + what + " takes an activation, %" + std::to_string(v) +
                " is a weight");
  }
  if (n.op == Op::quantize || n.op == Op::round_bf16) {
    throw Error(std::string("graph: ") + what + " takes an f32 activation, %" + std::to_string(v) +
                (n.op == Op::quantize ? " is quantized" : " is rounded to bf16"));
  }
  return n;
}

ValueId Graph::push(Node n) {
  nodes_.push_back(std::move(n));
  return static_cast<ValueId>(nodes_.size()) - 1;
}

ValueId Graph::input(const std::string& name, int64_t width) {
  if (width < 1) throw Error("graph: input " + name + " needs a positive width");
  for (const Node& other : nodes_) {
    if (other.op == Op::input && other.name == name) throw Error("graph: two inputs named " + name);
  }
  Node n;
  n.op = Op::input;
  n.rows = tokens_;
  n.cols = width;
  n.name = name;
  return push(std::move(n));
}

ValueId Graph::weight(const std::string& name, std::span<const float> data, int64_t rows,
                      int64_t cols) {
  if (rows < 1 || cols < 1 ||
      data.size() != static_cast<size_t>(rows) * static_cast<size_t>(cols)) {
    throw Error("graph: weight " + name + " holds " + std::to_string(data.size()) +
                " floats, not [" + std::to_string(rows) + "x" + std::to_string(cols) + "]");
  }
  Node n;
  n.op = Op::weight;
  n.rows = rows;
  n.cols = cols;
  n.name = name;
  n.data = data;
  return push(std::move(n));
}

ValueId Graph::weight_vector(const std::string& name, std::span<const float> data) {
  const ValueId v = weight(name, data, 1, static_cast<int64_t>(data.size()));
  nodes_.back().vector_weight = true;
  return v;
}

ValueId Graph::matvec(ValueId w, ValueId x) {
  const Node& wn = node(w);
  const Node& xn = activation(x, "matvec");
  if (wn.op != Op::weight || wn.vector_weight || !wn.tensor.empty() || wn.cols != xn.cols) {
    throw Error("graph: matvec needs an f32 matrix [rows x " + std::to_string(xn.cols) +
                "], got %" + std::to_string(w));
  }
  Node n;
  n.op = Op::matvec;
  n.rows = tokens_;
  n.cols = wn.rows;
  n.args = {w, x};
  return push(std::move(n));
}

ValueId Graph::rmsnorm(ValueId x, ValueId w, float eps) {
  const Node& xn = activation(x, "rmsnorm");
  const Node& wn = node(w);
  if (wn.op != Op::weight || !wn.vector_weight || wn.cols != xn.cols) {
    throw Error("graph: rmsnorm needs a weight vector [" + std::to_string(xn.cols) + "]");
  }
  Node n;
  n.op = Op::rmsnorm;
  n.rows = tokens_;
  n.cols = xn.cols;
  n.args = {x, w};
  n.eps = eps;
  return push(std::move(n));
}

ValueId Graph::add(ValueId a, ValueId b) {
  const Node& an = activation(a, "add");
  const Node& bn = activation(b, "add");
  if (an.cols != bn.cols) throw Error("graph: add of different widths");
  Node n;
  n.op = Op::add;
  n.rows = tokens_;
  n.cols = an.cols;
  n.args = {a, b};
  return push(std::move(n));
}

ValueId Graph::swiglu(ValueId gate, ValueId up) {
  const Node& gn = activation(gate, "swiglu");
  const Node& un = activation(up, "swiglu");
  if (gn.cols != un.cols) throw Error("graph: swiglu of different widths");
  Node n;
  n.op = Op::swiglu;
  n.rows = tokens_;
  n.cols = gn.cols;
  n.args = {gate, up};
  return push(std::move(n));
}

ValueId Graph::slice(ValueId x, int64_t begin, int64_t width) {
  const Node& xn = activation(x, "slice");
  if (begin < 0 || width < 1 || begin > xn.cols - width) {
    throw Error("graph: slice [" + std::to_string(begin) + ", +" + std::to_string(width) +
                ") outside width " + std::to_string(xn.cols));
  }
  Node n;
  n.op = Op::slice;
  n.rows = tokens_;
  n.cols = width;
  n.args = {x};
  n.begin = begin;
  return push(std::move(n));
}

void Graph::output(const std::string& name, ValueId v) {
  activation(v, "output");
  for (const auto& o : outputs_) {
    if (o.name == name) throw Error("graph: two outputs named " + name);
  }
  outputs_.push_back({name, v});
}

}  // namespace llama::graph
