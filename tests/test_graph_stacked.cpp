// Stacked bf16/f16 projections (weight_copies.hpp, layer_graphs.cpp): one
// product over wqkv [q_dim + 2 kv_dim, dim] and one over w13 [2 hidden_dim,
// dim] give, sliced, the separate products' bits, for decode (1 token) and
// batches, under both numerics policies, on 1 and 2 threads, for a
// grouped-query model whose sizes are no multiple of any tile (dim 72, 6
// heads of 12, 2 kv heads: wqkv 120 rows; hidden 100: w13 200 rows). End to
// end, the graph's exact bf16/f16 batches equal its f32 batches on the
// widened weights bit for bit (every product sums the upcast weights in
// f32 in the same order). A residual add fused into a typed product (wo,
// w2) gives the separate add's bits. GGUF's block types stack the same way,
// checked on the GGUF test models.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "conformance_models.hpp"
#include "graph/compiler.hpp"
#include "graph/executor.hpp"
#include "graph/graph_backend.hpp"
#include "graph/layer_graphs.hpp"
#include "graph/weight_copies.hpp"
#include "llama/formats/gguf_model.hpp"
#include "llama/formats/llama2c_checkpoint.hpp"
#include "llama/kernels/products/half_products.hpp"
#include "test_support.hpp"

using namespace llama;
using namespace llama::graph;

namespace {

// Grouped-query heads, sizes no tile divides.
Model odd_gqa_model() {
  const Config c = Config::llama2c(72, 100, 2, 6, 2, 97, 40, false);
  return conformance::random_model(c, 15, "odd-gqa");
}

using Rows = std::map<std::string, std::vector<float>>;  // name -> f32 [tokens, width]

// Compiles and runs `g` on `inputs`, returning the outputs named in `outputs`
// and how many typed products (and adds) the plan runs.
Rows run(const Graph& g, Numerics numerics, const Rows& inputs, int64_t tokens, int threads,
         const std::vector<std::string>& outputs, int64_t* products, bool fuse = true,
         int64_t* adds = nullptr) {
  CompileOptions options;
  options.numerics = numerics;
  options.fuse_residual_add = fuse;
  const Plan p = compile(g, options);
  *products = 0;
  for (const Instruction& in : p.instructions) *products += in.op == Op::matvec_typed;
  if (adds != nullptr) {
    *adds = 0;
    for (const Instruction& in : p.instructions) *adds += in.op == Op::add;
  }
  std::vector<float> arena(p.arena_floats(), -3.0f);
  for (const Binding& input : p.inputs) {
    const std::vector<float>& rows = inputs.at(input.name);
    const ArenaRef r = input.ref;
    for (int64_t t = 0; t < tokens; ++t) {
      std::copy_n(rows.begin() + t * r.cols, r.cols,
                  arena.begin() + static_cast<std::ptrdiff_t>(r.offset + size_t(t * r.ld)));
    }
  }
  Executor(threads).run(p, arena, tokens);
  Rows out;
  for (const std::string& name : outputs) {
    const ArenaRef r = p.output(name).ref;
    std::vector<float>& v = out[name];
    for (int64_t t = 0; t < tokens; ++t) {
      const auto* row = arena.data() + r.offset + size_t(t * r.ld);
      v.insert(v.end(), row, row + r.cols);
    }
  }
  return out;
}

}  // namespace

TEST_CASE("graph: stacked bf16/f16 products give the separate products' bits",
          "[graph][half][stacked]") {
  const test::ScopedEnv unit("LLAMA_BF16_UNIT", "on");  // fast: the bf16 unit where the CPU has it
  const Model f32 = odd_gqa_model();
  const Config& c = f32.config;
  REQUIRE(c.kv_dim() < c.q_dim());
  for (const DType dtype : {DType::bf16, DType::f16}) {
    const Model m = conformance::with_dtype(f32, dtype);
    const WeightCopies copies(m.weights, m.config, [](std::span<const std::byte>) {});
    const LayerCopy& stacked = copies.layer(1);
    REQUIRE(stacked.wqkv.typed());
    REQUIRE(stacked.w13.typed());
    LayerCopy separate = stacked;  // the same matrices, one product each
    separate.wqkv = {};
    separate.w13 = {};
    const std::vector<float> gains = test::random_floats(c.dim, 4, 1.0f);
    for (const Numerics numerics : {Numerics::exact, Numerics::fast}) {
      for (const int64_t tokens : {1, 9, 70}) {
        for (const int threads : {1, 2}) {
          INFO(to_string(dtype) << ", " << to_string(numerics) << ", " << tokens << " tokens, "
                                << threads << " threads");
          const Rows in{{"x", test::random_floats(tokens * c.dim, 5, 1.0f)},
                        {"att", test::random_floats(tokens * c.q_dim(), 6, 1.0f)}};
          const auto both = [&](auto build, const std::vector<std::string>& names,
                                int64_t stacked_products, int64_t separate_products) {
            int64_t n_stacked = 0, n_separate = 0;
            const Rows a = run(build(stacked), numerics, in, tokens, threads, names, &n_stacked);
            const Rows b = run(build(separate), numerics, in, tokens, threads, names, &n_separate);
            CHECK(n_stacked == stacked_products);
            CHECK(n_separate == separate_products);
            for (const std::string& name : names) {
              INFO(name);
              CHECK(a.at(name) == b.at(name));
            }
          };
          both(
              [&](const LayerCopy& w) {
                return attention_in_graph(c, StepArithmetic::run_c, gains, w, tokens, numerics);
              },
              {"q", "k", "v"}, 1, 3);
          both(
              [&](const LayerCopy& w) {
                return feed_forward_graph(c, StepArithmetic::run_c, gains, w, tokens, numerics);
              },
              {"x"}, 3, 4);
        }
      }
    }
  }
}

TEST_CASE("graph: stacked GGUF block products give the separate products' bits",
          "[graph][gguf][stacked]") {
  // GGUF's blocks hold their scales, so a group of one block type stacks like
  // bf16/f16, in every layer or in none: Q4_K_M's Q6_K wv in some layers keeps
  // wq, wk and wv apart in all of them.
  for (const char* file :
       {"gguf/stories1M.q4_0.gguf", "gguf/stories1M.q4_1.gguf", "gguf/stories1M.q5_0.gguf",
        "gguf/stories1M.q5_1.gguf", "gguf/stories1M.q8_0.gguf", "gguf/rand-k.q4_k_m.gguf",
        "gguf/rand-k.q2_k.gguf", "gguf/rand-k.q3_k_m.gguf", "gguf/rand-k.q6_k.gguf"}) {
    const gguf::GgufModel g = gguf::open_model(test::model_path(file));
    const Config& c = g.model.config;
    const WeightCopies copies(g.model.weights, c, [](std::span<const std::byte>) {});
    bool qkv_alike = true, w13_alike = true;
    for (const LayerWeights& t : g.model.weights.layers) {
      qkv_alike = qkv_alike && t.wq.dtype == t.wk.dtype && t.wk.dtype == t.wv.dtype;
      w13_alike = w13_alike && t.w1.dtype == t.w3.dtype;
    }
    INFO(file);
    CHECK(w13_alike);  // every test model's w1 and w3 share a type
    for (int64_t l = 0; l < c.n_layers; ++l) {
      const LayerCopy& stacked = copies.layer(l);
      CHECK(stacked.wqkv.typed() == qkv_alike);
      CHECK(stacked.w13.typed() == w13_alike);
      LayerCopy separate = stacked;
      separate.wqkv = {};
      separate.w13 = {};
      const std::vector<float> gains = test::random_floats(c.dim, 10, 1.0f);
      for (const int64_t tokens : {1, 9, 70}) {
        for (const int threads : {1, 2}) {
          INFO(file << " layer " << l << ", " << tokens << " tokens, " << threads << " threads");
          const Rows in{{"x", test::random_floats(tokens * c.dim, 11, 1.0f)},
                        {"att", test::random_floats(tokens * c.q_dim(), 12, 1.0f)}};
          const auto same = [&](const Graph& a, const Graph& b,
                                const std::vector<std::string>& names) {
            int64_t n = 0;
            const Rows ra = run(a, Numerics::exact, in, tokens, threads, names, &n);
            const Rows rb = run(b, Numerics::exact, in, tokens, threads, names, &n);
            for (const std::string& name : names) {
              INFO(name);
              CHECK(ra.at(name) == rb.at(name));
            }
          };
          const auto att = [&](const LayerCopy& w) {
            return attention_in_graph(c, StepArithmetic::run_c, gains, w, tokens, Numerics::exact);
          };
          const auto ffn = [&](const LayerCopy& w) {
            return feed_forward_graph(c, StepArithmetic::run_c, gains, w, tokens, Numerics::exact);
          };
          same(att(stacked), att(separate), {"q", "k", "v"});
          same(ffn(stacked), ffn(separate), {"x"});
        }
      }
    }
  }
}

TEST_CASE("graph: exact bf16/f16 batches equal the f32 batches on the widened weights",
          "[graph][half][stacked]") {
  const Checkpoint gqa = Checkpoint::open(test::model_path("rand-gqa.bin"));
  const Model odd = odd_gqa_model();
  for (const Model* base : {&odd, &gqa.model()}) {
    // Chunks of the batch plans, the last one partial but not one token
    // (a single token runs decode's kernels, whose sums differ by dtype).
    const int64_t n = std::min<int64_t>(base->config.seq_len - 1, GraphBackend::kBatchTokens + 7);
    std::vector<int32_t> tokens;
    for (int64_t i = 0; i < n; ++i) {
      tokens.push_back(static_cast<int32_t>((i * 37 + 1) % base->config.vocab_size));
    }
    // LLAMA_BF16_UNIT=off: bf16 batches on the f32 GEMM, as f16's always, so
    // the same bits; the default: bf16 on amx-bf16x3 where the CPU has AMX
    // (three exact bf16 planes, other sums), within llama-conformance's
    // upcast-exact bound of the f32 model.
    for (const char* unit : {"off", "probe"}) {
      const test::ScopedEnv env("LLAMA_BF16_UNIT", unit);
      for (const DType dtype : {DType::bf16, DType::f16}) {
        INFO(base->source << " in " << to_string(dtype) << ", " << n
                          << " tokens, LLAMA_BF16_UNIT=" << unit);
        const Model typed = conformance::with_dtype(*base, dtype);
        const Model widened = conformance::widened_to_f32(typed);
        BackendOptions options;
        options.threads = 2;
        GraphBackend a(options), b(options);
        a.prepare(typed);
        b.prepare(widened);
        CHECK_THAT(a.describe(), Catch::Contains("wq/wk/wv stacked into wqkv " +
                                                 std::string(to_string(dtype)) + " ["));
        CHECK_THAT(b.describe(), Catch::Contains("wq/wk/wv stacked into wqkv f32 ["));
        const std::span<const float> la = a.forward_batch(tokens, 0, true);
        const std::vector<float> got(la.begin(), la.end());
        const std::span<const float> lb = b.forward_batch(tokens, 0, true);
        const std::vector<float> want(lb.begin(), lb.end());
        const bool x3 = dtype == DType::bf16 &&
                        half_batch_path(BlockKind::bf16, best_kernel_set(), Numerics::exact) ==
                            HalfPath::amx_bf16x3;
        if (!x3) {
          CHECK(got == want);
          continue;
        }
        float top = 0, diff = 0;
        for (size_t i = 0; i < want.size(); ++i) {
          top = std::max(top, std::fabs(want[i]));
          diff = std::max(diff, std::fabs(got[i] - want[i]));
        }
        CHECK(diff <= 1e-5f * top);
      }
    }
  }
}

TEST_CASE("graph: a residual add fused into a typed product gives the separate add's bits",
          "[graph][half][stacked]") {
  const test::ScopedEnv unit("LLAMA_BF16_UNIT", "on");  // fast: the bf16 unit where the CPU has it
  const Model f32 = odd_gqa_model();
  const Config& c = f32.config;
  const std::vector<float> gains = test::random_floats(c.dim, 7, 1.0f);
  for (const auto& [dtype, group] :
       {std::pair{DType::bf16, 0}, {DType::f16, 0}, {DType::q8_0, 4}}) {
    const Model m = conformance::with_dtype(f32, dtype, group);
    const WeightCopies copies(m.weights, m.config, [](std::span<const std::byte>) {});
    for (const Numerics numerics : {Numerics::exact, Numerics::fast}) {
      for (const int64_t tokens : {1, 9, 70}) {
        for (const int threads : {1, 2}) {
          INFO(to_string(dtype) << ", " << to_string(numerics) << ", " << tokens << " tokens, "
                                << threads << " threads");
          const Rows in{{"x", test::random_floats(tokens * c.dim, 8, 1.0f)},
                        {"att", test::random_floats(tokens * c.q_dim(), 9, 1.0f)}};
          const Graph g = feed_forward_graph(c, StepArithmetic::run_c, gains, copies.layer(0),
                                             tokens, numerics);
          int64_t products = 0, fused_adds = 0, adds = 0;
          const Rows fused =
              run(g, numerics, in, tokens, threads, {"x"}, &products, true, &fused_adds);
          const Rows separate =
              run(g, numerics, in, tokens, threads, {"x"}, &products, false, &adds);
          CHECK(fused_adds == 0);  // x + wo att and x1 + w2 (...) both fused
          CHECK(adds == 2);
          CHECK(fused.at("x") == separate.at("x"));
        }
      }
    }
  }
}
