// K-quant products with q8_K activations (kernels/products/gguf_kquant.hpp):
// the quantizer against hand-checked blocks and across SIMD levels, and for
// every K type (Q2_K..Q6_K) the dot products against a plain integer loop
// over codes unpacked as ggml's dequantize_row_q*_K walk them (exactly, where
// the float steps are exact, else within rounding of the exact sum), every
// kernel set against the portable loops bit for bit over odd row ranges, the
// batch against one vector at a time, and the refusals.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <utility>

#include "kquant_blocks.hpp"
#include "llama/error.hpp"
#include "llama/kernels/dispatch/kernel_set.hpp"
#include "llama/kernels/numbers/half.hpp"
#include "llama/kernels/products/gguf_kquant.hpp"
#include "test_support.hpp"

using llama::BlockKind;
using llama::BlockMatrix;
using llama::test::Q8K;

namespace {

constexpr BlockKind kKinds[] = {BlockKind::q4_k, BlockKind::q5_k, BlockKind::q6_k, BlockKind::q3_k,
                                BlockKind::q2_k};

Q8K quantize(const std::vector<float>& x, llama::SimdLevel level = llama::SimdLevel::portable) {
  Q8K q{std::vector<int8_t>(x.size()), std::vector<float>(x.size() / 256)};
  llama::quantize_activations_q8_k(x, q.values, q.d, level);
  return q;
}

std::vector<float> random_vector(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = dist(rng);
  return v;
}

std::vector<llama::KernelSet> kernel_sets() {
  return llama::test::runnable_kernel_sets("q8_K products");
}

// Vector t of x's n vectors of `cols` values.
llama::Q8View vector_of(const Q8K& x, int64_t cols, int64_t t) {
  return {{x.values.data() + t * cols, static_cast<size_t>(cols)},
          {x.d.data() + t * cols / 256, static_cast<size_t>(cols / 256)},
          256};
}

// Every kernel set's decode of each row of w (of 512 columns) against vector 0
// of x equals the integer loop's value rounded once: for inputs whose float
// steps are exact.
void check_exact(const BlockMatrix& w, const Q8K& x) {
  for (llama::KernelSet k : kernel_sets()) {
    INFO(llama::to_string(k));
    std::vector<float> out(static_cast<size_t>(w.rows));
    llama::kquant_q8_k_matvec_rows(out, w, vector_of(x, 512, 0), 0, w.rows, k);
    for (int64_t r = 0; r < w.rows; ++r) {
      double mag;
      CHECK(out[static_cast<size_t>(r)] ==
            static_cast<float>(llama::test::int_loop_dot(w.kind, w.row(r), 512, x, 0, &mag)));
    }
  }
}

}  // namespace

TEST_CASE("q8_K: blocks quantize as ggml's quantize_row_q8_K", "[gguf][kernels][q8k]") {
  // Hand-checked: the first largest |x| is -2 (x[3]; x[10] = 2 ties later),
  // so iscale = -127 / -2 = 63.5: 1 -> 63.5 -> 64 (half to even), 0.5 ->
  // 31.75 -> 32, -1 -> -64, 2 -> 127, -2 -> -127; d = 1 / 63.5.
  std::vector<float> x(256, 0.0f);
  x[3] = -2.0f;
  x[10] = 2.0f;
  x[20] = 1.0f;
  x[21] = 0.5f;
  x[40] = -1.0f;
  x[41] = 2.5f / 63.5f;  // 2.5 in the product up to rounding
  // A positive maximum gives a negative d: 4 -> -127, 1 -> -31.75 -> -32.
  std::vector<float> y(256, 0.0f);
  y[0] = 4.0f;
  y[1] = 1.0f;
  y[2] = -4.0f;
  for (llama::SimdLevel level : llama::kSimdLevels) {
    INFO(llama::to_string(level));
    const Q8K q = quantize(x, level);
    CHECK(q.d[0] == 1 / 63.5f);
    CHECK(q.values[3] == -127);
    CHECK(q.values[10] == 127);
    CHECK(q.values[20] == 64);
    CHECK(q.values[21] == 32);
    CHECK(q.values[40] == -64);
    CHECK(q.values[41] == static_cast<int8_t>(std::nearbyint(63.5f * x[41])));
    CHECK(q.values[0] == 0);
    const Q8K p = quantize(y, level);
    CHECK(p.d[0] == 1 / (-127.f / 4.0f));
    CHECK(p.d[0] < 0);
    CHECK(p.values[0] == -127);
    CHECK(p.values[1] == -32);
    CHECK(p.values[2] == 127);
    // A block of zeros: d 0, values 0; a NaN is passed over for the maximum
    // and becomes 0.
    const Q8K z = quantize(std::vector<float>(256, 0.0f), level);
    CHECK(z.d[0] == 0.0f);
    CHECK(std::all_of(z.values.begin(), z.values.end(), [](int8_t v) { return v == 0; }));
    std::vector<float> n = y;
    n[5] = std::numeric_limits<float>::quiet_NaN();
    const Q8K qn = quantize(n, level);
    CHECK(qn.d[0] == p.d[0]);
    CHECK(qn.values[5] == 0);
  }
}

TEST_CASE("q8_K: every SIMD level quantizes with the portable bits", "[gguf][kernels][q8k]") {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    std::vector<float> x = random_vector(256 * 8, seed);
    for (size_t i = 0; i < x.size(); i += 37) x[i] *= 100.0f;  // outliers set the scale
    for (size_t i = 0; i < 256; ++i) x[i] = 0.0f;              // a block of zeros
    x[300] = -x[301];                                          // ties of |x|
    const uint32_t nan_bits[] = {0x7FC00123u, 0xFFC0ABCDu};    // NaNs with payloads
    std::memcpy(&x[500], &nan_bits[0], 4);
    std::memcpy(&x[700], &nan_bits[1], 4);
    const Q8K portable = quantize(x);
    for (llama::SimdLevel level : llama::kSimdLevels) {
      if (!llama::simd_level_supported(level)) {
        WARN("this CPU does not run " << llama::to_string(level) << ": not compared");
        continue;
      }
      const Q8K q = quantize(x, level);
      CHECK(q.values == portable.values);
      REQUIRE(q.d.size() == portable.d.size());
      CHECK(std::memcmp(q.d.data(), portable.d.data(), q.d.size() * 4) == 0);
    }
  }
  std::vector<int8_t> v(256);
  std::vector<float> d(2);
  CHECK_THROWS_AS(llama::quantize_activations_q8_k(std::vector<float>(256), v, d), llama::Error);
}

TEST_CASE("q8_K products: exactly the integer loop where the float steps are exact",
          "[gguf][kernels][q8k]") {
  // Weights with d = dmin = 1 and x's d 1: every product and sum of the
  // definition is an exact float, so the result is the integer loop's.
  for (BlockKind kind : kKinds) {
    INFO(llama::to_string(kind));
    auto bytes = llama::test::random_kquant_blocks(kind, 3, 512, 7);
    const uint16_t one = llama::f32_to_f16(1.0f);
    const auto bb = static_cast<size_t>(llama::block_bytes(kind));
    for (size_t at = 0; at < bytes.size(); at += bb) {
      for (size_t f : llama::test::kquant_scale_fields(kind)) {
        std::memcpy(bytes.data() + at + f, &one, 2);
      }
    }
    const BlockMatrix w{bytes, 3, 512, kind};
    std::vector<float> xf(512);
    for (size_t i = 0; i < xf.size(); ++i) {
      xf[i] = static_cast<float>(static_cast<int>(i % 255) - 127);
    }
    const Q8K x = quantize(xf);
    REQUIRE(x.d[0] == 1.0f);  // max -127 at index 0: iscale 1
    check_exact(w, x);
  }
}

TEST_CASE("Q3_K, Q2_K q8_K products: the extreme codes and values do not saturate",
          "[gguf][kernels][q8k]") {
  // Every code at its largest magnitude (Q3_K: -4 with every high bit clear,
  // Q2_K: 3) and the largest scales against values of -128 and 127, with unit
  // float scales: the integer loop's sums exactly, in every kernel set (the
  // AVX2 bodies' int16 pair sums must not saturate).
  for (BlockKind kind : {BlockKind::q3_k, BlockKind::q2_k}) {
    INFO(llama::to_string(kind));
    const BlockMatrix shape{{}, 2, 512, kind};
    std::vector<std::byte> bytes(static_cast<size_t>(2 * shape.row_bytes()));
    const auto bb = static_cast<size_t>(llama::block_bytes(kind));
    const uint16_t one = llama::f32_to_f16(1.0f);
    for (size_t at = 0; at < bytes.size(); at += bb) {
      if (kind == BlockKind::q3_k) {  // hmask 0, qs 0 (codes -4), scales -32 (bytes 0)
        std::memset(bytes.data() + at, 0, bb);
      } else {  // codes 3, scales and mins 15
        std::memset(bytes.data() + at, 0xFF, bb);
      }
      for (size_t f : llama::test::kquant_scale_fields(kind)) {
        std::memcpy(bytes.data() + at + f, &one, 2);
      }
    }
    const BlockMatrix w{bytes, 2, 512, kind};
    for (int8_t low : {int8_t{-128}, int8_t{127}}) {
      Q8K x{std::vector<int8_t>(512), std::vector<float>(2, 1.0f)};
      for (size_t i = 0; i < x.values.size(); ++i) x.values[i] = i % 5 == 4 ? 127 : low;
      check_exact(w, x);
    }
  }
}

TEST_CASE("q8_K products: within rounding of the exact sum, every kernel set the portable bits",
          "[gguf][kernels][q8k]") {
  const std::vector<llama::KernelSet> kernels = kernel_sets();
  for (BlockKind kind : kKinds) {
    INFO(llama::to_string(kind));
    constexpr int64_t rows = 37, cols = 256 * 6, n = 11;
    const auto bytes = llama::test::random_kquant_blocks(kind, rows, cols, 11);
    const BlockMatrix w{bytes, rows, cols, kind};
    const Q8K x = quantize(random_vector(n * cols, 5));
    std::vector<std::vector<float>> decode(n, std::vector<float>(rows));
    for (int64_t t = 0; t < n; ++t) {
      llama::kquant_q8_k_matvec_rows(decode[t], w, vector_of(x, cols, t), 0, rows,
                                     llama::KernelSet::portable);
      for (int64_t r = 0; r < rows; ++r) {
        double mag;
        const double exact = llama::test::int_loop_dot(kind, w.row(r), cols, x, t, &mag);
        CHECK(std::fabs(decode[t][r] - exact) <= 64 * 6e-8 * mag);
      }
    }
    for (llama::KernelSet k : kernels) {
      INFO(llama::to_string(k));
      // Decode over odd row ranges: each row the bits of the whole range's.
      for (auto [begin, end] : {std::pair<int64_t, int64_t>{3, rows}, {0, 1}, {17, 18}, {5, 22}}) {
        for (int64_t t = 0; t < n; ++t) {
          std::vector<float> out(static_cast<size_t>(end - begin));
          llama::kquant_q8_k_matvec_rows(out, w, vector_of(x, cols, t), begin, end, k);
          for (int64_t r = begin; r < end; ++r) CHECK(out[r - begin] == decode[t][r]);
        }
      }
      // Batches of 1..11 vectors (passes of 8 and the rest) over two row ranges.
      for (auto [begin, end] : {std::pair<int64_t, int64_t>{2, rows - 1}, {30, 31}}) {
        for (int64_t m = 1; m <= n; ++m) {
          const llama::Q8BatchView b{{x.values.data(), static_cast<size_t>(m * cols)},
                                     {x.d.data(), static_cast<size_t>(m * cols / 256)},
                                     cols,
                                     256};
          std::vector<float> out(static_cast<size_t>(m * rows), -1.0f);
          llama::kquant_q8_k_matmat_rows(out, rows, w, b, begin, end, k);
          for (int64_t t = 0; t < m; ++t) {
            for (int64_t r = begin; r < end; ++r) CHECK(out[t * rows + r] == decode[t][r]);
          }
        }
      }
    }
  }
}

TEST_CASE("q8_K products: other weights and mismatched inputs are refused",
          "[gguf][kernels][q8k]") {
  const auto portable = llama::KernelSet::portable;
  std::vector<int8_t> v(512);
  std::vector<float> d(2), out(2);
  for (BlockKind kind : kKinds) {
    INFO(llama::to_string(kind));
    const auto bytes = llama::test::random_kquant_blocks(kind, 2, 256, 3);
    const BlockMatrix w{bytes, 2, 256, kind};
    CHECK_THROWS_AS(llama::kquant_q8_k_matvec_rows(out, w, {v, d, 256}, 0, 2, portable),
                    llama::Error);
    CHECK_THROWS_AS(
        llama::kquant_q8_k_matvec_rows(out, w, {std::span(v).first(256), std::span(d).first(1), 32},
                                       0, 2, portable),
        llama::Error);
  }
  const auto bytes = llama::test::random_kquant_blocks(BlockKind::q4_k, 2, 256, 3);
  const BlockMatrix q40{std::span(bytes).first(36), 2, 32, BlockKind::q4_0};
  CHECK_THROWS_AS(
      llama::kquant_q8_k_matvec_rows(out, q40, {std::span(v).first(32), std::span(d).first(1), 32},
                                     0, 2, portable),
      llama::Error);
}
