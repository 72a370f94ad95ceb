// Graph compiler: liveness, fusion, lifetimes, arena offsets, SSA text.
#include "compiler.hpp"

#include <algorithm>
#include <sstream>

#include "arena_planner.hpp"
#include "llama/checked_math.hpp"
#include "llama/error.hpp"
#include "llama/kernels/products/bf16_batch.hpp"

namespace llama::graph {
namespace {

struct Work {
  Op op;
  std::vector<ValueId> args;
};

bool computes(Op op) { return op != Op::input && op != Op::weight && op != Op::slice; }

std::string shape_text(int64_t rows, int64_t cols, bool vector) {
  std::ostringstream s;
  s << "[";
  if (!vector) s << rows << "x";
  s << cols << "]";
  return s.str();
}

class Compiler {
 public:
  Compiler(const Graph& g, const CompileOptions& o) : g_(g), o_(o), n_(g.nodes().size()) {}

  Plan run() {
    mark_live();
    work_.reserve(n_);
    for (const Node& node : g_.nodes()) work_.push_back({node.op, node.args});
    if (o_.fuse_residual_add) fuse();
    assign_steps();
    resolve_views();
    compute_lifetimes();
    Plan plan;
    plan.tokens = g_.tokens();
    layout(plan);
    emit(plan);
    return plan;
  }

 private:
  const Node& node(ValueId v) const { return g_.nodes()[static_cast<size_t>(v)]; }
  size_t at(ValueId v) const { return static_cast<size_t>(v); }
  bool is_activation(ValueId v) const { return node(v).op != Op::weight; }

  void mark_live() {
    live_.assign(n_, false);
    for (const GraphOutput& o : g_.outputs()) live_[at(o.value)] = true;
    for (size_t v = n_; v-- > 0;) {
      if (g_.nodes()[v].op == Op::input) live_[v] = true;  // inputs are the interface
      if (!live_[v]) continue;
      for (ValueId a : g_.nodes()[v].args) live_[at(a)] = true;
    }
  }

  // add(matvec(W, x), r) -> matvec_add(W, x, r), and add(matvec_typed(W, x),
  // r) -> matvec_typed(W, x, r), when the product has no other use. Bits: the
  // fused kernels add r once to the finished product, as the add did (f32
  // addition commutes).
  void fuse() {
    std::vector<int64_t> uses(n_, 0);
    for (size_t v = 0; v < n_; ++v) {
      if (!live_[v]) continue;
      for (ValueId a : work_[v].args) ++uses[at(a)];
    }
    for (const GraphOutput& o : g_.outputs()) ++uses[at(o.value)];
    for (size_t v = 0; v < n_; ++v) {
      if (!live_[v] || work_[v].op != Op::add) continue;
      for (int side = 0; side < 2; ++side) {
        const ValueId m = work_[v].args[static_cast<size_t>(side)];
        const ValueId r = work_[v].args[static_cast<size_t>(1 - side)];
        const Op op = work_[at(m)].op;
        if ((op != Op::matvec && op != Op::matvec_typed) || uses[at(m)] != 1 || m == r) continue;
        work_[v] = {op == Op::matvec ? Op::matvec_add : Op::matvec_typed,
                    {work_[at(m)].args[0], work_[at(m)].args[1], r}};
        live_[at(m)] = false;
        break;
      }
    }
  }

  void assign_steps() {
    step_.assign(n_, -1);
    for (size_t v = 0; v < n_; ++v) {
      if (live_[v] && computes(work_[v].op)) step_[v] = n_steps_++;
    }
  }

  void resolve_views() {
    root_.assign(n_, 0);
    col_.assign(n_, 0);
    for (size_t v = 0; v < n_; ++v) {
      root_[v] = static_cast<ValueId>(v);
      if (work_[v].op == Op::slice) {
        const ValueId parent = work_[v].args[0];
        root_[v] = root_[at(parent)];
        col_[v] = col_[at(parent)] + node(static_cast<ValueId>(v)).begin;
      }
    }
  }

  void compute_lifetimes() {
    first_.assign(n_, 0);
    last_.assign(n_, 0);
    for (size_t v = 0; v < n_; ++v) {
      if (!live_[v] || work_[v].op == Op::weight || work_[v].op == Op::slice) continue;
      first_[v] = work_[v].op == Op::input ? 0 : step_[v];
      last_[v] = first_[v];
    }
    for (size_t v = 0; v < n_; ++v) {
      if (!live_[v] || !computes(work_[v].op)) continue;
      for (ValueId a : work_[v].args) {
        if (is_activation(a)) {
          const size_t r = at(root_[at(a)]);
          last_[r] = std::max(last_[r], step_[v]);
        }
      }
    }
    const int64_t end = std::max<int64_t>(n_steps_ - 1, 0);
    for (const GraphOutput& o : g_.outputs()) {
      const size_t r = at(root_[at(o.value)]);
      last_[r] = std::max(last_[r], end);
    }
  }

  size_t value_bytes(size_t v) const {
    const Node& n = node(static_cast<ValueId>(v));
    if (work_[v].op == Op::quantize) return quantized_bytes(n);
    if (work_[v].op == Op::round_bf16) return rounded_bytes(n);
    const int64_t floats = checked_mul(n.rows, n.cols, "graph value");
    return static_cast<size_t>(checked_mul(floats, int64_t{sizeof(float)}, "graph value"));
  }

  // f32 scales [rows, cols / group_size], then i8 values [rows, cols] padded to
  // whole floats.
  static size_t quantized_scale_bytes(const Node& n) {
    return static_cast<size_t>(
        checked_mul(checked_mul(n.rows, n.cols / n.format.group_size, "graph value"),
                    int64_t{sizeof(float)}, "graph value"));
  }
  static size_t quantized_bytes(const Node& n) {
    const int64_t values = checked_mul(n.rows, n.cols, "graph value");
    const int64_t padded = checked_add(values, int64_t{sizeof(float) - 1}, "graph value") /
                           int64_t{sizeof(float)} * int64_t{sizeof(float)};
    return quantized_scale_bytes(n) + static_cast<size_t>(padded);
  }

  // The batch rounded to bf16 in the layout of the products reading it
  // (bf16_batch_values: rows, or tiles with room for whole 32-token blocks),
  // padded to whole floats.
  size_t rounded_bytes(const Node& n) const {
    const int64_t values = bf16_batch_values(n.rows, n.cols, rounded_layout());
    const int64_t bytes = checked_mul(values, int64_t{sizeof(uint16_t)}, "graph value");
    return static_cast<size_t>(checked_add(bytes, int64_t{sizeof(float) - 1}, "graph value") /
                               int64_t{sizeof(float)} * int64_t{sizeof(float)});
  }

  void layout(Plan& plan) {
    std::vector<BufferRequest> requests;
    std::vector<size_t> owners;
    for (size_t v = 0; v < n_; ++v) {
      if (!live_[v] || work_[v].op == Op::weight || work_[v].op == Op::slice) continue;
      requests.push_back({value_bytes(v), first_[v], last_[v]});
      owners.push_back(v);
    }
    const ArenaLayout arena = plan_arena(requests);
    offset_.assign(n_, 0);
    for (size_t i = 0; i < owners.size(); ++i) {
      offset_[owners[i]] = arena.offsets[i];
      plan.value_bytes += requests[i].bytes;
    }
    plan.arena_bytes = arena.arena_bytes;
    for (size_t v = 0; v < n_; ++v) {
      if (!live_[v] || work_[v].op == Op::weight) continue;
      const size_t r = at(root_[v]);
      ValueLayout vl;
      vl.value = static_cast<ValueId>(v);
      vl.root = root_[v];
      vl.offset_bytes = offset_[r] + static_cast<size_t>(col_[v]) * sizeof(float);
      vl.bytes = value_bytes(v);
      vl.first = first_[r];
      vl.last = last_[r];
      vl.view = r != v;
      plan.values.push_back(vl);
      plan.ssa.push_back(ssa_line(v));
    }
  }

  ArenaRef ref(ValueId v) const {
    const size_t r = at(root_[at(v)]);
    return {offset_[r] / sizeof(float) + static_cast<size_t>(col_[at(v)]), node(v).cols,
            node(static_cast<ValueId>(r)).cols};
  }

  void emit(Plan& plan) {
    for (size_t v = 0; v < n_; ++v) {
      if (!live_[v]) continue;
      const auto id = static_cast<ValueId>(v);
      const Work& w = work_[v];
      if (w.op == Op::input) plan.inputs.push_back({node(id).name, id, ref(id)});
      if (!computes(w.op)) continue;
      Instruction in;
      in.op = w.op;
      in.value = id;
      in.out = ref(id);
      switch (w.op) {
        case Op::matvec:
        case Op::matvec_add:
        case Op::rmsnorm:
        case Op::rmsnorm_fma: {
          const bool norm = w.op == Op::rmsnorm || w.op == Op::rmsnorm_fma;
          const Node& wn = node(norm ? w.args[1] : w.args[0]);
          in.w = wn.data.data();
          in.w_rows = wn.rows;
          in.w_cols = wn.cols;
          in.a = ref(norm ? w.args[0] : w.args[1]);
          if (norm) in.eps = node(id).eps;
          if (w.op == Op::matvec_add) in.b = ref(w.args[2]);
          break;
        }
        case Op::quantize:
        case Op::round_bf16:
        case Op::matvec_typed:
          emit_typed(in, w);
          break;
        default:
          in.a = ref(w.args[0]);
          in.b = ref(w.args[1]);
      }
      plan.instructions.push_back(in);
    }
    for (const GraphOutput& o : g_.outputs())
      plan.outputs.push_back({o.name, o.value, ref(o.value)});
  }

  // in.out (quantize) or in.a (matvec_typed on a quantized input) is a
  // quantized value: its scales at the ref's offset, its i8 values after them.
  void emit_typed(Instruction& in, const Work& w) const {
    if (w.op == Op::quantize) {
      const Node& qn = node(in.value);
      in.format = qn.format;
      in.q_values = offset_[at(in.value)] + quantized_scale_bytes(qn);
      in.a = ref(w.args[0]);
      return;
    }
    if (w.op == Op::round_bf16) {
      in.a = ref(w.args[0]);
      in.bf16_layout = rounded_layout();
      return;
    }
    const Node& wn = node(w.args[0]);
    const ValueId x = w.args[1];
    in.a = ref(x);
    in.format = wn.format;
    if (wn.format.quantized()) in.q_values = offset_[at(x)] + quantized_scale_bytes(node(x));
    in.tw = wn.tensor;
    in.w_rows = wn.rows;
    in.w_cols = wn.cols;
    in.q8_kernel = o_.q8_kernel;
    in.numerics = o_.numerics;
    in.bf16_input = node(x).op == Op::round_bf16;
    in.bf16_layout = rounded_layout();
    if (w.args.size() == 3) {  // fused residual
      in.residual = true;
      in.b = ref(w.args[2]);
    }
    // A rounded input is only for the path that reads it.
    if (in.bf16_input && !batch_rounds_to_bf16(wn.tensor, in.q8_kernel, in.numerics)) {
      throw Error("graph: " + wn.tensor.describe() + " reads %" + std::to_string(x) +
                  " rounded to bf16, but its batch path under these options is " +
                  to_string(half_batch_path(BlockKind::bf16, in.q8_kernel, in.numerics)));
    }
  }

  // Where the fast paths take bf16 weights' batches under these options.
  Bf16Layout rounded_layout() const { return bf16_batch_layout(o_.q8_kernel, o_.numerics); }

  std::string operand(ValueId a) const {
    const Node& n = node(a);
    std::ostringstream s;
    if (n.op == Op::weight) {
      s << n.name << (n.tensor.empty() ? "" : std::string(" ") + to_string(n.tensor.dtype))
        << shape_text(n.rows, n.cols, n.vector_weight);
    } else {
      s << "%" << a;
    }
    return s.str();
  }

  std::string ssa_line(size_t v) const {
    const auto id = static_cast<ValueId>(v);
    const Node& n = node(id);
    std::ostringstream s;
    s << "%" << v << " = " << op_name(work_[v].op);
    if (work_[v].op == Op::input) s << " " << n.name;
    for (size_t i = 0; i < work_[v].args.size(); ++i) {
      s << (i == 0 ? " " : ", ") << operand(work_[v].args[i]);
    }
    if (work_[v].op == Op::slice) s << "[" << n.begin << ":" << n.begin + n.cols << "]";
    if (work_[v].op == Op::quantize) s << " as " << to_string(n.format);
    s << " : "
      << (work_[v].op == Op::quantize     ? "i8"
          : work_[v].op == Op::round_bf16 ? "bf16"
                                          : "")
      << (g_.tokens() == 1 ? shape_text(1, n.cols, true) : shape_text(n.rows, n.cols, false));
    return s.str();
  }

  const Graph& g_;
  const CompileOptions& o_;
  size_t n_;
  std::vector<Work> work_;  // per value: the op after fusion
  std::vector<bool> live_;
  std::vector<int64_t> step_;   // instruction index, -1 for inputs, weights, views
  std::vector<ValueId> root_;   // the value owning the bytes
  std::vector<int64_t> col_;    // first column within the root
  std::vector<int64_t> first_;  // roots: lifetime
  std::vector<int64_t> last_;
  std::vector<size_t> offset_;  // roots: bytes into the arena
  int64_t n_steps_ = 0;
};

}  // namespace

Plan compile(const Graph& graph, const CompileOptions& options) {
  if (graph.outputs().empty()) throw Error("graph: compile needs at least one output");
  return Compiler(graph, options).run();
}

}  // namespace llama::graph
