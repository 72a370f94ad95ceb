// The graph compiler and arena planner: exact lifetimes and offsets on
// hand-built graphs, dead values and fusion, and a property test over random
// DAGs (no two live values share a byte; replay equals naive evaluation).
#include <catch2/catch.hpp>
#include <cmath>
#include <deque>
#include <map>
#include <random>
#include <sstream>

#include "graph/arena_planner.hpp"
#include "graph/compiler.hpp"
#include "graph/executor.hpp"
#include "graph/kernels.hpp"
#include "llama/error.hpp"
#include "llama/kernels/products/gemm_f32.hpp"

using namespace llama::graph;

namespace {

const ValueLayout& layout_of(const Plan& p, ValueId v) {
  for (const ValueLayout& l : p.values) {
    if (l.value == v) return l;
  }
  FAIL("value %" << v << " not in the plan");
  throw std::logic_error("unreachable");
}

bool in_plan(const Plan& p, ValueId v) {
  for (const ValueLayout& l : p.values) {
    if (l.value == v) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("graph compiler: lifetimes and best-fit offsets of a hand-built graph", "[graph]") {
  Graph g;
  const ValueId x = g.input("x", 16);  // 64 B
  const ValueId y = g.input("y", 32);  // 128 B
  const ValueId a = g.add(x, x);       // step 0
  const ValueId b = g.add(a, a);       // step 1
  const ValueId c = g.add(b, a);       // step 2
  const ValueId d = g.add(y, y);       // step 3
  g.output("c", c);
  g.output("d", d);
  const Plan p = compile(g);
  REQUIRE(p.instructions.size() == 4);

  // {value, first, last, offset}: y and d (largest) first, then x, a, b, c; b
  // reuses x's bytes (x is dead after step 0), c goes on top.
  const std::vector<std::tuple<ValueId, int64_t, int64_t, size_t>> want = {
      {x, 0, 0, 128}, {y, 0, 3, 0}, {a, 0, 2, 192}, {b, 1, 2, 128}, {c, 2, 3, 256}, {d, 3, 3, 128}};
  for (const auto& [v, first, last, offset] : want) {
    INFO("%" << v);
    const ValueLayout& l = layout_of(p, v);
    CHECK(l.first == first);
    CHECK(l.last == last);
    CHECK(l.offset_bytes == offset);
    CHECK_FALSE(l.view);
  }
  CHECK(p.arena_bytes == 320);
  CHECK(p.value_bytes == 64 + 128 + 64 + 64 + 64 + 128);
  CHECK(p.input("y").ref.offset == 0);
  CHECK(p.output("c").ref.offset == 256 / sizeof(float));
}

TEST_CASE("graph compiler: the planner's gaps and overlap rule", "[graph]") {
  // r4 reuses r0's bytes once r0 is dead; r1 and r3 sit above the two big ones.
  const std::vector<BufferRequest> r = {
      {256, 0, 2}, {100, 0, 1}, {256, 0, 3}, {64, 2, 3}, {128, 3, 3}};
  const ArenaLayout a = plan_arena(r);
  CHECK(a.offsets == std::vector<size_t>{0, 512, 256, 512, 0});
  CHECK(a.arena_bytes == 640);
  CHECK(lifetimes_overlap({1, 0, 2}, {1, 2, 4}));
  CHECK_FALSE(lifetimes_overlap({1, 0, 1}, {1, 2, 4}));
}

TEST_CASE("graph compiler: dead values are dropped, views share bytes", "[graph]") {
  const std::vector<float> w(8 * 4, 0.5f), w2(3 * 4, 0.25f), n(4, 1.0f);
  Graph g;
  const ValueId x = g.input("x", 4);
  const ValueId unused = g.input("unused", 4);  // inputs stay: they are the interface
  const ValueId xn = g.rmsnorm(x, g.weight_vector("n", n), 1e-5f);
  const ValueId h = g.matvec(g.weight("w", w, 8, 4), xn);
  const ValueId lo = g.slice(h, 0, 4);
  const ValueId hi = g.slice(h, 4, 4);
  const ValueId dead1 = g.matvec(g.weight("w2", w2, 3, 4), x);
  const ValueId dead2 = g.add(lo, lo);
  g.output("hi", hi);
  const Plan p = compile(g);
  CHECK(p.instructions.size() == 2);  // rmsnorm, matvec
  CHECK_FALSE(in_plan(p, dead1));
  CHECK_FALSE(in_plan(p, dead2));
  CHECK_FALSE(in_plan(p, lo));
  CHECK(in_plan(p, unused));
  const ValueLayout& hl = layout_of(p, hi);
  CHECK(hl.view);
  CHECK(hl.root == h);
  CHECK(hl.offset_bytes == layout_of(p, h).offset_bytes + 4 * sizeof(float));
  CHECK(p.output("hi").ref.ld == 8);
  for (const std::string& line : p.ssa) CHECK(line.find("w2") == std::string::npos);
  CHECK(p.describe("t").find("%5 = matvec w[8x4], %3 : [8]") != std::string::npos);
}

TEST_CASE("graph compiler: a residual add fuses into the product feeding it", "[graph]") {
  const std::vector<float> w(4 * 4, 0.5f);
  Graph g;
  const ValueId x = g.input("x", 4);
  const ValueId m = g.matvec(g.weight("w", w, 4, 4), x);
  const ValueId y = g.add(x, m);
  g.output("y", y);
  const Plan fused = compile(g);
  REQUIRE(fused.instructions.size() == 1);
  CHECK(fused.instructions[0].op == Op::matvec_add);
  CHECK_FALSE(in_plan(fused, m));
  CHECK(compile(g, {.fuse_residual_add = false}).instructions.size() == 2);

  // Not when the product has another use.
  Graph g2;
  const ValueId x2 = g2.input("x", 4);
  const ValueId m2 = g2.matvec(g2.weight("w", w, 4, 4), x2);
  g2.output("y", g2.add(x2, m2));
  g2.output("m", m2);
  CHECK(compile(g2).instructions.size() == 2);
}

TEST_CASE("graph builder refuses mismatched shapes", "[graph][bad-input]") {
  const std::vector<float> w(3 * 4, 0.f), n(5, 1.f);
  Graph g;
  const ValueId x = g.input("x", 4);
  const ValueId z = g.input("z", 5);
  CHECK_THROWS_AS(g.input("x", 4), llama::Error);
  CHECK_THROWS_AS(g.add(x, z), llama::Error);
  CHECK_THROWS_AS(g.swiglu(x, z), llama::Error);
  CHECK_THROWS_AS(g.matvec(g.weight("w", w, 3, 4), z), llama::Error);
  CHECK_THROWS_AS(g.rmsnorm(x, g.weight_vector("n", n), 1e-5f), llama::Error);
  CHECK_THROWS_AS(g.weight("bad", w, 4, 4), llama::Error);
  CHECK_THROWS_AS(g.slice(x, 2, 3), llama::Error);
  CHECK_THROWS_AS(g.matvec(x, x), llama::Error);
  CHECK_THROWS_AS(g.node(99), llama::Error);
  CHECK_THROWS_AS(compile(g), llama::Error);  // no outputs
  CHECK_THROWS_AS(Graph(0), llama::Error);
}

namespace {

// A random valid graph with its weights kept alive.
struct RandomGraph {
  std::deque<std::vector<float>> weights;
  Graph g;
  explicit RandomGraph(int64_t tokens) : g(tokens) {}
};

std::string named(const char* prefix, int64_t i) {
  std::ostringstream s;
  s << prefix << i;
  return s.str();
}

RandomGraph make_random_graph(std::mt19937& rng) {
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  std::uniform_real_distribution<float> value(-1.f, 1.f);
  RandomGraph r(pick(1, 3));
  Graph& g = r.g;
  std::vector<ValueId> acts;
  const int64_t n_inputs = pick(1, 3);
  for (int64_t i = 0; i < n_inputs; ++i) {
    acts.push_back(g.input(named("in", i), pick(1, 4) * 4 + pick(0, 1)));
  }
  const int64_t n_ops = pick(1, 25);
  for (int64_t i = 0; i < n_ops; ++i) {
    const ValueId a = acts[static_cast<size_t>(pick(0, static_cast<int64_t>(acts.size()) - 1))];
    const int64_t width = g.node(a).cols;
    std::vector<ValueId> same;
    for (ValueId v : acts) {
      if (g.node(v).cols == width) same.push_back(v);
    }
    const ValueId b = same[static_cast<size_t>(pick(0, static_cast<int64_t>(same.size()) - 1))];
    auto& w = r.weights.emplace_back();
    switch (pick(0, 5)) {
      case 0: {
        const int64_t rows = pick(1, 21);
        w.resize(static_cast<size_t>(rows * width));
        for (float& f : w) f = value(rng);
        acts.push_back(g.matvec(g.weight(named("w", i), w, rows, width), a));
        break;
      }
      case 1:
        w.resize(static_cast<size_t>(width));
        for (float& f : w) f = value(rng);
        acts.push_back(g.rmsnorm(a, g.weight_vector(named("n", i), w), 1e-5f));
        break;
      case 2:
        acts.push_back(g.add(a, b));
        break;
      case 3:
        acts.push_back(g.swiglu(a, b));
        break;
      case 4:  // a residual block: b + W a, W square
        w.resize(static_cast<size_t>(width * width));
        for (float& f : w) f = value(rng);
        acts.push_back(g.add(b, g.matvec(g.weight(named("r", i), w, width, width), a)));
        break;
      default: {
        const int64_t len = pick(1, width);
        acts.push_back(g.slice(a, pick(0, width - len), len));
      }
    }
  }
  const int64_t n_outputs = pick(1, 3);
  for (int64_t i = 0; i < n_outputs; ++i) {
    // Favour late values so most of the graph is live.
    const int64_t lo = std::max<int64_t>(0, static_cast<int64_t>(acts.size()) - 6);
    const ValueId v = acts[static_cast<size_t>(pick(lo, static_cast<int64_t>(acts.size()) - 1))];
    g.output(named("out", i), v);
  }
  return r;
}

// Every value in its own buffer, evaluated in definition order with the same kernels.
std::map<ValueId, std::vector<float>> naive_eval(
    const Graph& g, const std::map<std::string, std::vector<float>>& in) {
  std::map<ValueId, std::vector<float>> val;
  const int64_t t = g.tokens();
  for (ValueId id = 0; id < static_cast<ValueId>(g.nodes().size()); ++id) {
    const Node& n = g.node(id);
    if (n.op == Op::weight) continue;
    std::vector<float> out(static_cast<size_t>(t * n.cols));
    auto arg = [&](size_t i) { return val.at(n.args[i]).data(); };
    const auto width = [&](size_t i) { return g.node(n.args[i]).cols; };
    for (int64_t r = 0; r < t; ++r) {
      float* o = out.data() + r * n.cols;
      switch (n.op) {
        case Op::input:
          std::copy_n(in.at(n.name).data() + r * n.cols, n.cols, o);
          break;
        case Op::matvec: {
          const Node& w = g.node(n.args[0]);
          const float* x = val.at(n.args[1]).data() + r * w.cols;
          // The executor's kernels: matvec for one token, the f32 batch product for more.
          if (t == 1) {
            matvec_rows(o, w.data.data(), x, w.cols, 0, w.rows, nullptr);
          } else {
            llama::gemm_f32_rows(o, n.cols, w.data.data(), x, w.cols, w.cols, 1, 0, w.rows, nullptr, 0);
          }
          break;
        }
        case Op::rmsnorm:
          rmsnorm_row(o, arg(0) + r * n.cols, g.node(n.args[1]).data.data(), n.cols, n.eps);
          break;
        case Op::add:
          add_row(o, arg(0) + r * n.cols, arg(1) + r * n.cols, n.cols);
          break;
        case Op::swiglu:
          swiglu_row(o, arg(0) + r * n.cols, arg(1) + r * n.cols, n.cols);
          break;
        case Op::slice:
          std::copy_n(arg(0) + r * width(0) + n.begin, n.cols, o);
          break;
        default:
          FAIL("unexpected op");
      }
    }
    val[id] = std::move(out);
  }
  return val;
}

}  // namespace

TEST_CASE("graph compiler: random DAGs never overlap live values and replay exactly",
          "[graph][property]") {
  std::mt19937 rng(20261129);
  const Executor exec(2);
  int fused_instructions = 0, reused_bytes = 0;
  for (int iter = 0; iter < 400; ++iter) {
    INFO("graph " << iter);
    RandomGraph r = make_random_graph(rng);
    const Graph& g = r.g;
    const Plan p = compile(g, {.fuse_residual_add = iter % 4 != 0});

    // No two buffers alive at the same time share a byte; all fit in the arena.
    for (const ValueLayout& a : p.values) {
      REQUIRE(a.first <= a.last);
      REQUIRE(a.offset_bytes + a.bytes <= p.arena_bytes);
      if (a.view) continue;
      REQUIRE(a.offset_bytes % kArenaAlignment == 0);
      for (const ValueLayout& b : p.values) {
        if (b.view || b.value <= a.value) continue;
        if (!lifetimes_overlap({a.bytes, a.first, a.last}, {b.bytes, b.first, b.last})) {
          if (a.offset_bytes < b.offset_bytes + b.bytes &&
              b.offset_bytes < a.offset_bytes + a.bytes)
            ++reused_bytes;
          continue;
        }
        const bool disjoint = a.offset_bytes + a.bytes <= b.offset_bytes ||
                              b.offset_bytes + b.bytes <= a.offset_bytes;
        INFO("%" << a.value << " and %" << b.value);
        REQUIRE(disjoint);
      }
    }
    for (const Instruction& in : p.instructions) fused_instructions += in.op == Op::matvec_add;

    // Replay on an arena full of garbage equals naive evaluation, bit for bit.
    std::map<std::string, std::vector<float>> inputs;
    std::uniform_real_distribution<float> value(-2.f, 2.f);
    std::vector<float> arena(p.arena_floats(), std::nanf(""));
    for (const Binding& b : p.inputs) {
      auto& v = inputs[b.name];
      v.resize(static_cast<size_t>(g.tokens() * b.ref.cols));
      for (float& f : v) f = value(rng);
      for (int64_t t = 0; t < g.tokens(); ++t) {
        std::copy_n(v.data() + t * b.ref.cols, b.ref.cols,
                    arena.data() + b.ref.offset + t * b.ref.ld);
      }
    }
    exec.run(p, arena, g.tokens());
    const auto want = naive_eval(g, inputs);
    for (const Binding& o : p.outputs) {
      INFO("output " << o.name << " = %" << o.value);
      const auto& expected = want.at(o.value);
      for (int64_t t = 0; t < g.tokens(); ++t) {
        for (int64_t i = 0; i < o.ref.cols; ++i) {
          const float got = arena[o.ref.offset + static_cast<size_t>(t * o.ref.ld + i)];
          const float exp = expected[static_cast<size_t>(t * o.ref.cols + i)];
          REQUIRE((got == exp || (std::isnan(got) && std::isnan(exp))));
        }
      }
    }
  }
  // The property was exercised: fusion happened and the planner did reuse bytes.
  CHECK(fused_instructions > 20);
  CHECK(reused_bytes > 20);
}
