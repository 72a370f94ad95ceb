// A compiled plan: the immutable result of compiling a Graph. Instructions in
// execution order with every operand resolved to an arena offset (activations)
// or a weight pointer, plus the per-value layout for inspection and tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "graph.hpp"
#include "llama/kernels/products/llama2c_int8.hpp"

namespace llama::graph {

// An activation operand in the arena: rows of `cols` floats, `ld` floats apart.
struct ArenaRef {
  size_t offset = 0;  // floats from the arena start
  int64_t cols = 0;
  int64_t ld = 0;  // row stride in floats (> cols for a column slice of a wider value)
};

struct Instruction {
  Op op =
      Op::input;  // matvec, matvec_add, rmsnorm, add, swiglu, quantize, round_bf16, matvec_typed
  ValueId value = 0;  // the graph value it defines
  ArenaRef out;
  ArenaRef a;                // matvec: x; rmsnorm: x; add/swiglu: first operand
  ArenaRef b;                // matvec_add: residual; add/swiglu: second operand
  const float* w = nullptr;  // matvec: f32 [w_rows, w_cols]; rmsnorm: f32 [w_cols]
  int64_t w_rows = 0;
  int64_t w_cols = 0;
  float eps = 0;  // rmsnorm, rmsnorm_fma
  // Typed ops. A quantized value is f32 scales [tokens, cols / group_size] at
  // its ArenaRef's offset, then i8 values [tokens, cols] at byte offset q_values.
  Tensor tw;            // matvec_typed: the weights, in place
  InputFormat format;   // quantize: its output; matvec_typed: what a holds
  size_t q_values = 0;  // bytes from the arena start: quantize: out's values; matvec_typed: a's
  KernelSet q8_kernel = KernelSet::portable;
  Numerics numerics = Numerics::exact;  // matvec_typed with a batch
  // matvec_typed: a holds the batch rounded to bf16 in bf16_layout (a
  // round_bf16 value, kernels/products/half_products.hpp Bf16BatchView) instead of
  // f32; round_bf16: out holds that, a the f32 rows.
  bool bf16_input = false;
  Bf16Layout bf16_layout = Bf16Layout::rows;
  // matvec_typed: out = b + x W^T, the residual add fused into the product
  // (compiler only; the sum is the separate add's bits: one f32 addition of
  // the finished product).
  bool residual = false;
};

// Where one live value sits; views (slices) share their root's bytes.
struct ValueLayout {
  ValueId value = 0;
  ValueId root = 0;         // the value owning the bytes (itself unless a view)
  size_t offset_bytes = 0;  // of this value's first element
  size_t bytes = 0;         // root: its whole buffer; view: tokens * width * 4
  int64_t first = 0;        // lifetime of the root's buffer, in instruction steps
  int64_t last = 0;
  bool view = false;
};

struct Binding {
  std::string name;
  ValueId value = 0;
  ArenaRef ref;
};

class Plan {
 public:
  int64_t tokens = 1;
  std::vector<Instruction> instructions;
  std::vector<ValueLayout> values;  // every live activation value, by id
  std::vector<Binding> inputs;
  std::vector<Binding> outputs;
  size_t arena_bytes = 0;
  size_t value_bytes = 0;        // sum of the sizes of all live non-view values
  std::vector<std::string> ssa;  // one line per live value, for describe()

  const Binding& input(const std::string& name) const;
  const Binding& output(const std::string& name) const;
  size_t arena_floats() const { return arena_bytes / sizeof(float); }

  // The plan in SSA form with each value's arena offset and size.
  std::string describe(const std::string& title) const;
};

}  // namespace llama::graph
