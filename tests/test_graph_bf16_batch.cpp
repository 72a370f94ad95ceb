// The fast paths' batch input rounded once (kernels/products/half_products.hpp
// Bf16BatchView, graph's Op::round_bf16): a batch rounded by
// round_batch_to_bf16 (over any split of its tokens), in the rows layout
// (onednn-bf16) or the tile layout (amx-bf16), gives that path's results bit
// for bit, over any split of the rows; the graph rounds an input once for
// every bf16 product reading it, plans the bf16 value like any other, and
// replays to the core's results; what cannot take a rounded input is
// refused. On a CPU without AVX512-BF16 only the refusals run, without AMX
// only the rows layout (said in the output).
#include <catch2/catch.hpp>
#include <random>
#include <vector>

#include "graph/compiler.hpp"
#include "graph/executor.hpp"
#include "graph/typed_ops.hpp"
#include "llama/error.hpp"
#include "llama/kernels/dispatch/product_table.hpp"
#include "llama/kernels/numbers/half.hpp"
#include "llama/kernels/products/half_products.hpp"
#include "llama/tensor.hpp"
#include "test_support.hpp"

using namespace llama;
using Catch::Matchers::Contains;

namespace {

std::vector<uint16_t> random_bf16(int64_t n, uint32_t seed) {  // bf16 [n]
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<uint16_t> v(static_cast<size_t>(n));
  for (uint16_t& b : v) b = f32_to_bf16(d(rng));
  return v;
}

bool fast_path_here() {
  if (half_path_available(HalfPath::onednn_bf16)) return true;
  WARN("this CPU lacks " << half_path_requirement(HalfPath::onednn_bf16)
                         << ": the rounded batch path is not run here, only its refusals");
  return false;
}

// The paths reading a rounded batch that this CPU runs, each with its
// layout; the others named.
std::vector<HalfPath> bf16_paths_here() {
  const HalfPath paths[] = {HalfPath::onednn_bf16, HalfPath::amx_bf16, HalfPath::amx_bf16x3};
  return test::runnable(
      "rounded batches", "bf16 paths", paths, half_path_available, [](HalfPath p) {
        return std::string(to_string(p)) + " (needs " + half_path_requirement(p) + ")";
      });
}

// Where token t's column k sits in a rounded batch (ld = bf16_batch_ld(cols));
// for tiles_x3 in plane 0 (the others follow at a third of the batch apart).
size_t rounded_index(Bf16Layout layout, int64_t ld, int64_t t, int64_t k) {
  if (layout == Bf16Layout::rows) return static_cast<size_t>(t * ld + k);
  // [token block][ld / 32][16 pairs][16 tokens][2]
  const int64_t block = t / 16, kb = k / 32, pair = (k % 32) / 2;
  return static_cast<size_t>(((block * (ld / 32) + kb) * 16 + pair) * 32 + (t % 16) * 2 + k % 2);
}

}  // namespace

TEST_CASE("a batch rounded once gives its path's results bit for bit", "[half][kernels]") {
  // The bf16 paths wherever the CPU runs them, whatever the probe says of their speed.
  const test::ScopedEnv unit("LLAMA_BF16_UNIT", "on");
  if (!fast_path_here()) {
    const std::vector<float> x(64, 1.0f);
    std::vector<uint16_t> out(64);
    CHECK_THROWS_WITH(round_batch_to_bf16(x, 32, 32, 0, 2, out), Contains("this CPU lacks"));
    return;
  }
  for (const HalfPath path : bf16_paths_here()) {
    const Bf16Layout layout = bf16_layout(path);
    const Numerics numerics = half_path_is_fast(path) ? Numerics::fast : Numerics::exact;
    const HalfPath table_path = half_batch_path(BlockKind::bf16, best_kernel_set(), numerics);
    for (const int64_t rows : {1, 37, 130}) {
      for (const int64_t cols : {3, 45, 64, 200}) {
        const std::vector<uint16_t> bits = random_bf16(rows * cols, uint32_t(rows * 100 + cols));
        const BlockMatrix w{std::as_bytes(std::span(bits)), rows, cols, BlockKind::bf16};
        const int64_t xld = cols + 5, ld = bf16_batch_ld(cols);
        CHECK(ld % 32 == 0);
        CHECK(ld >= cols);
        CHECK(ld < cols + 32);
        for (const int64_t n : {1, 7, 17, 70}) {
          INFO(to_string(path) << ", " << rows << "x" << cols << ", batch " << n);
          const std::vector<float> x = test::random_floats(n * xld, uint32_t(n + cols), 2.0f);
          std::vector<float> want(static_cast<size_t>(n * rows), -7.0f);
          half_matmat_rows(want, rows, w, x, xld, n, 0, rows, path);
          // Rounded in two token ranges, as a backend splits them over
          // threads (in the tile layout one off the 16-token blocks, so a
          // block is shared); the padding past cols must come out zero
          // whatever was there.
          const int64_t values = bf16_batch_values(n, cols, layout);
          const int64_t planes = layout == Bf16Layout::tiles_x3 ? 3 : 1;
          CHECK(values == (layout == Bf16Layout::rows ? n : (n + 31) / 32 * 32) * ld * planes);
          std::vector<uint16_t> rounded(static_cast<size_t>(values), 0xffff);
          round_batch_to_bf16(x, xld, cols, 0, n / 2, rounded, layout);
          round_batch_to_bf16(x, xld, cols, n / 2, n, rounded, layout);
          for (int64_t t = 0; t < n; ++t) {
            for (int64_t k = 0; k < ld; ++k) {
              const size_t at = rounded_index(layout, ld, t, k);
              const uint16_t got = rounded[at];
              if (k >= cols) {
                CHECK(got == 0);
                continue;
              }
              const float want = x[static_cast<size_t>(t * xld + k)];
              CHECK(got == f32_to_bf16(want));
              if (planes == 3) {  // the three planes sum to the value
                const auto plane = static_cast<size_t>(values / 3);
                CHECK(bf16_to_f32(got) + bf16_to_f32(rounded[at + plane]) +
                          bf16_to_f32(rounded[at + 2 * plane]) ==
                      want);
              }
            }
          }
          const Bf16BatchView view{rounded, ld, n, layout};
          std::vector<float> got(want.size(), -7.0f);
          half_matmat_rows(got, rows, w, view, 0, rows);
          CHECK(got == want);
          // Any row split (onednn-bf16 from 2 vectors on: for a single vector
          // oneDNN picks a kernel by the row count, whose sums differ in the
          // last bits; the graph runs that as one block).
          if (n > 1 || path == HalfPath::amx_bf16) {
            std::vector<float> split(want.size(), -7.0f);
            const int64_t mid = rows / 2;
            half_matmat_rows(split, rows, w, view, 0, mid);
            half_matmat_rows(split, rows, w, view, mid, rows);
            CHECK(split == want);
          }
          // Through the product table: ProductBatch::bf16 replaces the rounding.
          const Tensor t =
              Tensor::view("w", DType::bf16, {rows, cols}, std::as_bytes(std::span(bits)));
          ProductBatch pb{{}, xld, {}, n};
          pb.numerics = numerics;
          pb.bf16 = view;
          // Only where the table's batch path is this one (a lower
          // LLAMA_CPU_LEVEL picks another, which reads the f32 batch this
          // ProductBatch leaves empty, and refuses it; the other fast path
          // refuses the layout).
          if (table_path == path) {
            std::vector<float> table(want.size(), -7.0f);
            matmat_rows(table, rows, t, pb, 0, rows, best_kernel_set());
            CHECK(table == want);
          } else if (half_path_reads_bf16(table_path)) {
            CHECK_THROWS_WITH(matmat_rows(want, rows, t, pb, 0, rows, best_kernel_set()),
                              Contains(std::string("a bf16 batch in the ") + to_string(layout) +
                                       " layout for the " + to_string(table_path) + " path"));
          } else {
            CHECK_THROWS_WITH(matmat_rows(want, rows, t, pb, 0, rows, best_kernel_set()),
                              Contains("smaller than the batch"));
          }
        }
      }
    }
  }
}

TEST_CASE("BatchInputCache rounds a batch to bf16 once per set()", "[half][kernels]") {
  if (!fast_path_here()) return;
  const int64_t n = 5, cols = 45, ld = 50;
  const std::vector<float> a = test::random_floats(n * ld, 8, 2.0f),
                           b = test::random_floats(n * ld, 9, 2.0f);
  BatchInputCache cache;
  cache.reserve(n, cols);
  cache.set(a, ld, n, cols);
  CHECK_THROWS_WITH(cache.bf16(), Contains("more bf16 values than reserved"));
  for (const Bf16Layout layout : {Bf16Layout::rows, Bf16Layout::tiles}) {
    INFO(to_string(layout));
    cache.reserve_bf16(n, cols, layout);
    cache.set(a, ld, n, cols);
    std::vector<uint16_t> want(size_t(bf16_batch_values(n, cols, layout)));
    round_batch_to_bf16(a, ld, cols, 0, n, want, layout);
    const Bf16BatchView first = cache.bf16();
    CHECK(first.ld == bf16_batch_ld(cols));
    CHECK(first.n == n);
    CHECK(first.layout == layout);
    // The tokens past the batch are never written: compare the batch's own.
    const auto same = [&](const Bf16BatchView& v) {
      for (int64_t t = 0; t < n; ++t) {
        for (int64_t k = 0; k < first.ld; ++k) {
          const size_t i = rounded_index(layout, first.ld, t, k);
          if (v.values[i] != want[i]) return false;
        }
      }
      return true;
    };
    CHECK(same(first));
    cache.set(b, ld, n, cols);  // new values: rounded again
    round_batch_to_bf16(b, ld, cols, 0, n, want, layout);
    CHECK(same(cache.bf16()));
  }
}

TEST_CASE("rounded batches refuse what they cannot run", "[half][kernels][bad-input]") {
  if (!fast_path_here()) return;
  const std::vector<uint16_t> bits = random_bf16(4 * 40, 1);
  const BlockMatrix bf16{std::as_bytes(std::span(bits)), 4, 40, BlockKind::bf16};
  const BlockMatrix f16{std::as_bytes(std::span(bits)), 4, 40, BlockKind::f16};
  const std::vector<float> x(3 * 40, 1.0f);
  std::vector<uint16_t> rounded(3 * 64);
  std::vector<float> out(3 * 4);
  CHECK_THROWS_WITH(round_batch_to_bf16(x, 40, 40, 0, 4, rounded), Contains("smaller than"));
  CHECK_THROWS_WITH(round_batch_to_bf16(x, 30, 40, 0, 1, rounded), Contains("smaller than"));
  CHECK_THROWS_WITH(round_batch_to_bf16(std::span(x).first(100), 40, 40, 0, 3, rounded),
                    Contains("smaller than"));
  CHECK_THROWS_WITH(bf16_batch_ld(-1), Contains("-1 columns"));
  round_batch_to_bf16(x, 40, 40, 0, 3, rounded);
  CHECK_THROWS_WITH(half_matmat_rows(out, 4, f16, Bf16BatchView{rounded, 64, 3}, 0, 4),
                    Contains("takes bf16 weights"));
  CHECK_THROWS_WITH(half_matmat_rows(out, 4, bf16, Bf16BatchView{rounded, 40, 3}, 0, 4),
                    Contains("smaller than the product"));
  CHECK_THROWS_WITH(half_matmat_rows(out, 4, bf16, Bf16BatchView{rounded, 64, 4}, 0, 4),
                    Contains("smaller than the product"));
  CHECK_THROWS_WITH(half_matmat_rows(out, 4, bf16, Bf16BatchView{rounded, 64, 3}, 0, 5),
                    Contains("smaller than the product"));
  CHECK_THROWS_WITH(
      half_matmat_rows(std::span(out).first(11), 4, bf16, Bf16BatchView{rounded, 64, 3}, 0, 4),
      Contains("smaller than the product"));
  // The tile layout holds whole pairs of 16-token blocks: 3 tokens take 32.
  CHECK(bf16_batch_values(3, 40, Bf16Layout::tiles) == 32 * 64);
  CHECK_THROWS_WITH(bf16_batch_values(-1, 40, Bf16Layout::tiles), Contains("-1 vectors"));
  CHECK_THROWS_WITH(bf16_batch_values(int64_t{1} << 62, 40, Bf16Layout::rows),
                    Contains("a bf16 batch"));
  CHECK_THROWS_WITH(round_batch_to_bf16(x, 40, 40, 0, 3, rounded, Bf16Layout::tiles),
                    Contains("smaller than"));
  const Bf16BatchView short_tiles{rounded, 64, 3, Bf16Layout::tiles};
  CHECK_THROWS_WITH(half_matmat_rows(out, 4, bf16, short_tiles, 0, 4),
                    Contains(half_path_available(HalfPath::amx_bf16) ? "smaller than the product"
                                                                     : "this CPU lacks"));
  CHECK_THROWS_WITH(half_matmat_rows(out, 4, f16, short_tiles, 0, 4),
                    Contains("the amx-bf16 path takes bf16 weights"));
}

TEST_CASE("graph: one round_bf16 feeds every bf16 product of its input", "[graph][half]") {
  // The bf16 path wherever the CPU runs it, whatever the probe says of its speed.
  const test::ScopedEnv unit("LLAMA_BF16_UNIT", "on");
  using namespace llama::graph;
  // wq's batch is large enough to split over 2 threads, wk's is not.
  const int64_t tokens = 9, dim = 200, rows_q = 96, rows_k = 20;
  const std::vector<uint16_t> bq = random_bf16(rows_q * dim, 3), bk = random_bf16(rows_k * dim, 4);
  const Tensor wq = Tensor::view("wq", DType::bf16, {rows_q, dim}, std::as_bytes(std::span(bq)));
  const Tensor wk = Tensor::view("wk", DType::bf16, {rows_k, dim}, std::as_bytes(std::span(bk)));
  Graph g(tokens);
  const ValueId x = g.input("x", dim);
  const ValueId r = g.round_bf16(x);
  g.output("q", g.matvec_typed(g.weight_typed("wq", wq, Numerics::fast), r));
  g.output("k", g.matvec_typed(g.weight_typed("wk", wk, Numerics::fast), r));
  // Only matvec_typed with bf16 weights reads a rounded value.
  CHECK_THROWS_WITH(g.add(r, r), Contains("rounded to bf16"));
  CHECK_THROWS_WITH(g.output("r", r), Contains("rounded to bf16"));
  CHECK_THROWS_WITH(g.round_bf16(r), Contains("rounded to bf16"));
  const std::vector<uint16_t> hbits(size_t(rows_k * dim), 0x3c00);
  const Tensor wh = Tensor::view("wh", DType::f16, {rows_k, dim}, std::as_bytes(std::span(hbits)));
  CHECK_THROWS_WITH(g.matvec_typed(g.weight_typed("wh", wh, Numerics::fast), r),
                    Contains("needs an input [200]"));

  // Each policy whose batch path reads a rounded batch (fast: amx-bf16 or
  // onednn-bf16; exact: amx-bf16x3 on a CPU with AMX) compiles and replays to
  // the core's product; the others refuse the rounded input.
  const std::vector<float> input = test::random_floats(tokens * dim, 5, 2.0f);
  for (const Numerics numerics : {Numerics::fast, Numerics::exact}) {
    INFO(to_string(numerics) << " numerics");
    CompileOptions options;
    options.numerics = numerics;
    if (!fast_path_here() || !batch_rounds_to_bf16(wq, options.q8_kernel, numerics)) {
      CHECK_THROWS_WITH(compile(g, options), Contains("rounded to bf16, but its batch path"));
      continue;
    }
    const Plan p = compile(g, options);
    REQUIRE(p.instructions.size() == 3);
    CHECK(p.instructions[0].op == Op::round_bf16);
    CHECK(p.instructions[1].bf16_input);
    CHECK(p.instructions[2].bf16_input);
    CHECK(p.instructions[1].a.offset == p.instructions[0].out.offset);
    const Bf16Layout layout = bf16_batch_layout(options.q8_kernel, numerics);
    CHECK(p.instructions[0].bf16_layout == layout);
    CHECK(p.instructions[1].bf16_layout == layout);
    for (const ValueLayout& l : p.values) {
      if (l.value == r) CHECK(l.bytes == size_t(bf16_batch_values(tokens, dim, layout) * 2));
    }
    CHECK_THAT(p.describe("bf16"), Contains("= round_bf16 %0 : bf16[9x200]"));

    // Replay on 2 threads, and with fewer tokens than planned, equals the
    // core's product rounding the batch itself.
    for (const int64_t n : {tokens, int64_t{1}}) {
      for (const int threads : {1, 2}) {
        INFO(n << " tokens, " << threads << " threads");
        std::vector<float> arena(p.arena_floats(), -1.0f);
        std::copy(input.begin(), input.begin() + n * dim,
                  arena.begin() + std::ptrdiff_t(p.input("x").ref.offset));
        Executor(threads).run(p, arena, n);
        for (const auto& [name, w, rows] :
             {std::tuple{"q", &wq, rows_q}, std::tuple{"k", &wk, rows_k}}) {
          std::vector<float> want(size_t(n * rows));
          ProductBatch pb{std::span(input).first(size_t(n * dim)), dim, {}, n};
          pb.numerics = numerics;
          matmat_rows(want, rows, *w, pb, 0, rows, best_kernel_set());
          const ArenaRef out = p.output(name).ref;
          for (int64_t t = 0; t < n; ++t) {
            INFO(name << ", token " << t);
            CHECK(std::equal(want.begin() + t * rows, want.begin() + (t + 1) * rows,
                             arena.begin() + std::ptrdiff_t(out.offset + size_t(t * out.ld))));
          }
        }
      }
    }
  }
}
