// The graph backend on Q8_0 checkpoints: runq.c's streams (parity-q8.json,
// library and llama-cli, 1 and 2 threads), logits against the BLAS backend's
// int8 path, batches against sequential calls, and the IR's quantize and
// int8 matvec ops through the builder, the planner and the executor.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>

#include "graph/compiler.hpp"
#include "graph/executor.hpp"
#include "llama/error.hpp"
#include "llama/formats/llama2c_checkpoint.hpp"
#include "llama/generate.hpp"
#include "llama/kernels/products/llama2c_int8.hpp"
#include "llama/kernels/steps/runq_c.hpp"
#include "llama/registry.hpp"
#include "test_support.hpp"

using namespace llama;
using Catch::Matchers::Contains;

TEST_CASE("graph: parity-q8.json gives runq.c's stream, on 1 and 2 threads",
          "[graph][q8][parity]") {
  const auto cases = test::load_json(test::reference_path("parity-q8.json"));
  REQUIRE(!cases.empty());
  for (const auto& c : cases) {
    const Checkpoint ck = Checkpoint::open(test::model_path(c["model"].get<std::string>()));
    REQUIRE(ck.model().weights.dtypes().contains(DType::q8_0));
    for (const int threads : {1, 2}) {
      INFO("case " << c["name"].get<std::string>() << ", threads " << threads);
      const auto r = test::generate_case(ck, c, "graph", threads);
      CHECK(r.stream == c["stream"].get<std::vector<int32_t>>());
      CHECK(r.stopped_at_bos == c["stopped_at_bos"].get<bool>());
    }
  }
}

TEST_CASE("llama-cli -b graph --format json reproduces parity-q8.json", "[graph][q8][cli]") {
  for (const auto& c : test::load_json(test::reference_path("parity-q8.json"))) {
    for (const char* threads : {"1", "2"}) {
      INFO(c["name"].get<std::string>() << ", -j " << threads);
      const auto r = test::run_llama_cli_case(c, {"-b", "graph", "-j", threads});
      INFO(r.err);
      REQUIRE(r.exit_code == 0);
      const auto j = nlohmann::json::parse(r.out);
      CHECK(test::json_stream(j) == c["stream"].get<std::vector<int32_t>>());
      CHECK(j["backend"] == "graph");
    }
  }
}

TEST_CASE("graph: Q8_0 logits within 1e-5 of blas's at every position of parity-q8",
          "[graph][q8][parity]") {
  for (const auto& c : test::load_json(test::reference_path("parity-q8.json"))) {
    INFO("case " << c["name"].get<std::string>());
    const Checkpoint ck = Checkpoint::open(test::model_path(c["model"].get<std::string>()));
    const test::LogitAgreement a = test::compare_along_case(ck, c, "graph", "blas", 2);
    REQUIRE(a.positions >
            90);  // past position 92, where f32 arithmetic in place of runq.c's drifts
    INFO("worst at position " << a.worst_position);
    REQUIRE(a.max_diff <= 1e-5);
  }
}

TEST_CASE("graph: LLAMA_Q8_KERNEL=portable gives the same logits as the best kernel",
          "[graph][q8]") {
  const Checkpoint ck = Checkpoint::open(test::model_path("q-gqa.v2.bin"));
  auto best = test::make_backend("graph", 2);
  best->prepare(ck.model());
  auto portable = test::make_backend("graph", 2);
  {
    const test::ScopedEnv force("LLAMA_Q8_KERNEL", "portable");
    portable->prepare(ck.model());  // the kernel is chosen when the plans are compiled
  }
  CHECK_THAT(portable->describe(), Contains("q8 groups of 64, portable kernel"));
  // The avx2 set has no body for llama2.c's int8 groups: they run the portable loops under it.
  const KernelSet runs =
      runs_avx2_bodies(best_kernel_set()) ? KernelSet::portable : best_kernel_set();
  CHECK_THAT(best->describe(),
             Contains(std::string("q8 groups of 64, ") + to_string(runs) + " kernel"));
  for (int64_t pos = 0; pos < 40; ++pos) {
    INFO("position " << pos);
    const auto token = static_cast<int32_t>((pos * 131 + 1) % 32000);
    const auto a = best->forward(token, pos);
    const std::vector<float> got(a.begin(), a.end());
    const auto b = portable->forward(token, pos);
    REQUIRE(std::equal(got.begin(), got.end(), b.begin(), b.end()));
  }
}

TEST_CASE("graph: Q8_0 batches equal sequential calls bit for bit", "[graph][q8]") {
  const Checkpoint ck = Checkpoint::open(test::model_path("q-gqa.v2.bin"));
  const size_t vocab = static_cast<size_t>(ck.config().vocab_size);
  // More than one 128-token chunk, and a partial one at the end.
  const int64_t n = 150;
  REQUIRE(n < ck.config().seq_len);
  std::vector<int32_t> tokens;
  for (int64_t i = 0; i < n; ++i) tokens.push_back(static_cast<int32_t>((i * 37 + 1) % 32000));
  auto one = test::make_backend("graph", 1);
  one->prepare(ck.model());
  const std::vector<float> sequential = test::sequential_logits(*one, tokens);
  auto two = test::make_backend("graph", 2);
  two->prepare(ck.model());
  const auto batch = two->forward_batch(tokens, 0, /*all_logits=*/true);
  REQUIRE(batch.size() == sequential.size());
  CHECK(std::equal(batch.begin(), batch.end(), sequential.begin()));
  two->prepare(ck.model());  // starts over
  const auto last = two->forward_batch(tokens, 0);
  CHECK(std::equal(last.begin(), last.end(), sequential.end() - static_cast<std::ptrdiff_t>(vocab),
                   sequential.end()));
}

TEST_CASE("graph: --explain shows the int8 plans", "[graph][q8]") {
  const Checkpoint ck = Checkpoint::open(test::model_path("q-gqa.v2.bin"));
  auto graph = test::make_backend("graph", 1);
  graph->prepare(ck.model());
  const std::string d = graph->describe();
  CHECK_THAT(d, Contains("quantize %2 as q8 groups of 64 : i8[128]"));
  CHECK_THAT(d, Contains("matvec_typed wq q8_0[128x128], %3"));
  CHECK_THAT(d, Contains("matvec_typed wcls q8_0[32000x128]"));
  CHECK_THAT(d, Contains("steps (rmsnorm, rope, attention): runq.c's (f32 FMAs) arithmetic"));
}

namespace {

// A hand-built Q8_0 weight: i8 [rows, cols] from a fixed sequence, scales per group.
struct TestQ8Weight {
  std::vector<int8_t> values;
  std::vector<float> scales;
  int64_t rows = 0, cols = 0;
  QuantizedTensor view(int64_t gs) const { return {values, scales, gs}; }
  Tensor tensor(int64_t gs) const { return Tensor::q8_view("w", {rows, cols}, values, scales, gs); }
};

TestQ8Weight make_weight(int64_t rows, int64_t cols, int64_t gs) {
  TestQ8Weight w;
  w.rows = rows;
  w.cols = cols;
  for (int64_t i = 0; i < rows * cols; ++i) w.values.push_back(int8_t((i * 29 + 7) % 255 - 127));
  for (int64_t i = 0; i < rows * cols / gs; ++i) w.scales.push_back(0.001f * float(i % 13 + 1));
  return w;
}

}  // namespace

TEST_CASE("graph compiler: a quantize op is planned like any value, offsets exact", "[graph][q8]") {
  using namespace llama::graph;
  const int64_t tokens = 2, dim = 64, rows = 48, gs = 32;
  const std::vector<float> gain(dim, 1.25f);
  const TestQ8Weight wq = make_weight(rows, dim, gs);
  Graph g(tokens);
  const ValueId x = g.input("x", dim);                                       // 512 B
  const ValueId xn = g.rmsnorm_fma(x, g.weight_vector("rms", gain), 1e-5f);  // 512 B, step 0
  const InputFormat f{InputKind::q8_groups, gs};
  const ValueId xq = g.quantize(xn, f);  // 2x2 scales (16 B) + 2x64 values (128 B), step 1
  const ValueId y = g.matvec_typed(g.weight_typed("w", wq.tensor(gs)), xq);  // 384 B, step 2
  g.output("y", y);
  const Plan p = compile(g);
  REQUIRE(p.instructions.size() == 3);

  // Largest first: x at 0, xn beside it (both alive at step 0); y reuses x's
  // bytes (x is dead after step 0); xq overlaps xn and y, so it goes on top
  // (the 128 B gap between y and xn is smaller than its 192 aligned bytes).
  const std::vector<std::tuple<ValueId, int64_t, int64_t, size_t, size_t>> want = {
      {x, 0, 0, 0, 512}, {xn, 0, 1, 512, 512}, {xq, 1, 2, 1024, 144}, {y, 2, 2, 0, 384}};
  for (const auto& [v, first, last, offset, bytes] : want) {
    INFO("%" << v);
    const ValueLayout* l = nullptr;
    for (const ValueLayout& c : p.values) {
      if (c.value == v) l = &c;
    }
    REQUIRE(l != nullptr);
    CHECK(l->first == first);
    CHECK(l->last == last);
    CHECK(l->offset_bytes == offset);
    CHECK(l->bytes == bytes);
  }
  CHECK(p.arena_bytes == 1216);
  CHECK(p.value_bytes == 512 + 512 + 144 + 384);
  // The quantize writes scales at xq's offset and values after them; the
  // product reads the same two places.
  CHECK(p.instructions[1].op == Op::quantize);
  CHECK(p.instructions[1].out.offset == 1024 / 4);
  CHECK(p.instructions[1].q_values == 1024 + 16);
  CHECK(p.instructions[2].op == Op::matvec_typed);
  CHECK(p.instructions[2].a.offset == 1024 / 4);
  CHECK(p.instructions[2].q_values == 1024 + 16);
  CHECK(p.instructions[2].format == f);

  // Replay on 2 threads equals the core's kernels run by hand.
  std::vector<float> input(size_t(tokens * dim));
  for (size_t i = 0; i < input.size(); ++i) input[i] = std::sin(0.37f * float(i)) * 3.0f;
  std::vector<float> arena(p.arena_floats(), -1.0f);
  std::copy(input.begin(), input.end(), arena.begin() + std::ptrdiff_t(p.input("x").ref.offset));
  Executor(2).run(p, arena, tokens);
  const ArenaRef out = p.output("y").ref;
  for (int64_t t = 0; t < tokens; ++t) {
    INFO("token " << t);
    std::vector<float> norm(static_cast<size_t>(dim));
    q8::rmsnorm(norm, std::span(input).subspan(size_t(t * dim), size_t(dim)), gain, 1e-5f);
    Q8Vector q;
    q.resize(dim, gs);
    quantize_activations(norm, q);
    std::vector<float> expect(static_cast<size_t>(rows));
    q8_matvec_rows(expect, wq.view(gs), q, 0, rows, KernelSet::portable);
    CHECK(std::equal(expect.begin(), expect.end(),
                     arena.begin() + std::ptrdiff_t(out.offset + size_t(t * out.ld))));
  }
  CHECK_THAT(p.describe("q8"), Contains("%3 = quantize %2 as q8 groups of 32 : i8[2x64]"));
}

TEST_CASE("graph builder: quantized values feed only matvec_typed", "[graph][q8][bad-input]") {
  using namespace llama::graph;
  const TestQ8Weight wq = make_weight(8, 64, 32);
  const std::vector<float> wf(8 * 64, 0.5f);
  Graph g;
  const ValueId x = g.input("x", 64);
  const InputFormat groups32{InputKind::q8_groups, 32};
  const ValueId xq = g.quantize(x, groups32);
  const ValueId w8 = g.weight_typed("w8", wq.tensor(32));
  const ValueId wf32 = g.weight("wf", wf, 8, 64);
  CHECK_THROWS_WITH(g.add(xq, xq), Contains("quantized"));
  CHECK_THROWS_WITH(g.matvec(wf32, xq), Contains("quantized"));
  CHECK_THROWS_WITH(g.output("q", xq), Contains("quantized"));
  CHECK_THROWS_WITH(g.slice(xq, 0, 32), Contains("quantized"));
  CHECK_THROWS_WITH(g.matvec(w8, x), Contains("f32 matrix"));
  CHECK_THROWS_WITH(g.matvec_typed(w8, x), Contains("as q8 groups of 32"));
  CHECK_THROWS_WITH(g.matvec_typed(wf32, xq), Contains("needs a typed weight"));
  CHECK_THROWS_WITH(g.matvec_typed(w8, g.quantize(x, {InputKind::q8_groups, 16})),
                    Contains("as q8 groups of 32"));
  CHECK_THROWS_WITH(g.quantize(x, {InputKind::q8_groups, 48}), Contains("groups of 48"));
  CHECK_THROWS_WITH(g.quantize(x, {}), Contains("as f32"));
  const std::vector<float> vf(64, 1.0f);
  CHECK_THROWS_WITH(g.weight_typed("vec", Tensor::f32_view("v", {64}, vf)),
                    Contains("not a matrix"));
  CHECK_THROWS_WITH(g.weight_typed("f32", Tensor::f32_view("m", {8, 64}, wf)),
                    Contains("no product kernels"));
  CHECK_NOTHROW(g.output("y", g.matvec_typed(w8, xq)));
}
