// The graph backend's kernels against plain reference loops, odd sizes included.
#include <catch2/catch.hpp>
#include <cmath>
#include <random>

#include "graph/kernels.hpp"

using namespace llama::graph;

namespace {

std::vector<float> random_floats(size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  std::vector<float> v(n);
  for (float& f : v) f = d(rng);
  return v;
}

}  // namespace

TEST_CASE("graph kernels: matvec rows against a plain loop", "[graph][kernels]") {
  std::mt19937 rng(7);
  for (int64_t rows : {1, 3, 4, 5, 17, 64}) {
    for (int64_t cols : {1, 7, 16, 33, 100, 288}) {
      INFO(rows << "x" << cols);
      const auto w = random_floats(static_cast<size_t>(rows * cols), rng);
      const auto x = random_floats(static_cast<size_t>(cols), rng);
      const auto r = random_floats(static_cast<size_t>(rows), rng);
      std::vector<float> y(static_cast<size_t>(rows), -7.f), ya(static_cast<size_t>(rows), -7.f);
      // A partial range leaves the rows outside it alone.
      const int64_t r0 = rows > 2 ? 1 : 0, r1 = rows > 3 ? rows - 1 : rows;
      matvec_rows(y.data(), w.data(), x.data(), cols, r0, r1, nullptr);
      matvec_rows(ya.data(), w.data(), x.data(), cols, r0, r1, r.data());
      for (int64_t i = 0; i < rows; ++i) {
        if (i < r0 || i >= r1) {
          CHECK(y[i] == -7.f);
          continue;
        }
        double s = 0, mag = 0;
        for (int64_t j = 0; j < cols; ++j) {
          s += double(w[i * cols + j]) * double(x[j]);
          mag += std::abs(double(w[i * cols + j]) * double(x[j]));
        }
        // The f32 sum's error bound: cols roundings of at most 2^-24 each.
        CHECK(std::abs(y[i] - s) <= double(cols) * 0x1p-24 * mag + 1e-30);
        CHECK(ya[i] == r[i] + y[i]);  // the fused residual adds the rounded product
      }
    }
  }
}

TEST_CASE("graph kernels: the batched product against a plain loop", "[graph][kernels]") {
  std::mt19937 rng(8);
  for (int64_t cols : {1, 5, 64, 257, 1000, 2816}) {
    // 66 rows from row 3: a whole and a partial panel (48 rows each); tokens
    // not a multiple of the 8 per tile; up to 2816 columns: several column blocks.
    for (int64_t tokens : {1, 2, 13, 30}) {
      INFO("cols = " << cols << ", tokens = " << tokens);
      const int64_t rows = 71;
      const int64_t ldx = cols + 3, ldy = rows + 2, ldr = rows + 1;
      const auto w = random_floats(static_cast<size_t>(rows * cols), rng);
      const auto x = random_floats(static_cast<size_t>(tokens * ldx), rng);
      const auto r = random_floats(static_cast<size_t>(tokens * ldr), rng);
      std::vector<float> y(static_cast<size_t>(tokens * ldy), -7.f), ya = y;
      const int64_t r0 = 3, r1 = rows - 2;  // the rows outside the range are left alone
      matmul_rows(y.data(), ldy, w.data(), x.data(), ldx, cols, tokens, r0, r1, nullptr, 0);
      matmul_rows(ya.data(), ldy, w.data(), x.data(), ldx, cols, tokens, r0, r1, r.data(), ldr);
      for (int64_t t = 0; t < tokens; ++t) {
        for (int64_t i = 0; i < rows; ++i) {
          const float got = y[t * ldy + i];
          if (i < r0 || i >= r1) {
            REQUIRE(got == -7.f);
            REQUIRE(ya[t * ldy + i] == -7.f);
            continue;
          }
          double s = 0, mag = 0;
          for (int64_t j = 0; j < cols; ++j) {
            const double p = double(w[i * cols + j]) * double(x[t * ldx + j]);
            s += p;
            mag += std::abs(p);
          }
          // An f32 sum in column order: cols roundings of at most 2^-24 each.
          REQUIRE(std::abs(got - s) <= double(cols) * 0x1p-24 * mag + 1e-30);
          REQUIRE(ya[t * ldy + i] == r[t * ldr + i] + got);  // the residual added once
        }
      }
    }
  }
}

TEST_CASE("graph kernels: the batched product does not depend on the row split or token count",
          "[graph][kernels]") {
  // What keeps 1 and 2 threads (different row blocks) and batch sizes on the same bits.
  std::mt19937 rng(10);
  const int64_t rows = 100, cols = 600, tokens = 29;
  const auto w = random_floats(static_cast<size_t>(rows * cols), rng);
  const auto x = random_floats(static_cast<size_t>(tokens * cols), rng);
  std::vector<float> whole(static_cast<size_t>(tokens * rows), 0.f), parts = whole, single = whole;
  matmul_rows(whole.data(), rows, w.data(), x.data(), cols, cols, tokens, 0, rows, nullptr, 0);
  for (int64_t r0 = 0; r0 < rows;) {
    const int64_t r1 = std::min(rows, r0 + 1 + r0 % 37);  // ranges of 1 to 37 rows
    matmul_rows(parts.data(), rows, w.data(), x.data(), cols, cols, tokens, r0, r1, nullptr, 0);
    r0 = r1;
  }
  for (int64_t t = 0; t < tokens; ++t) {
    matmul_rows(single.data() + t * rows, rows, w.data(), x.data() + t * cols, cols, cols, 1, 0,
                rows, nullptr, 0);
  }
  CHECK(parts == whole);
  CHECK(single == whole);
}

TEST_CASE("graph kernels: rmsnorm, add and swiglu against plain loops", "[graph][kernels]") {
  std::mt19937 rng(9);
  for (int64_t n : {1, 5, 16, 31, 768}) {
    INFO("n = " << n);
    const auto a = random_floats(static_cast<size_t>(n), rng);
    const auto b = random_floats(static_cast<size_t>(n), rng);
    std::vector<float> out(static_cast<size_t>(n));

    rmsnorm_row(out.data(), a.data(), b.data(), n, 1e-5f);
    double ss = 0;
    for (float v : a) ss += double(v) * v;
    const double inv = 1.0 / std::sqrt(ss / double(n) + 1e-5);
    for (int64_t i = 0; i < n; ++i) CHECK(std::abs(out[i] - b[i] * a[i] * inv) <= 1e-6 * inv);

    add_row(out.data(), a.data(), b.data(), n);
    for (int64_t i = 0; i < n; ++i) CHECK(out[i] == a[i] + b[i]);

    swiglu_row(out.data(), a.data(), b.data(), n);
    for (int64_t i = 0; i < n; ++i) {
      const double silu = double(a[i]) / (1.0 + std::exp(-double(a[i])));
      CHECK(std::abs(out[i] - silu * b[i]) <= 1e-6);
    }
  }
}
