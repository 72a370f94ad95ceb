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
