// The core's batch GEMM (kernels/products/gemm_f32.hpp): f32 weights against plain
// loops, its independence of the row split and token count, and bf16/f16
// weights (every backend's exact prefill of bf16/f16 models): on every
// SimdLevel this CPU runs, the same bits as the f32 GEMM on the exactly upcast
// weights, over sizes off the row tiles (6 rows), the 16-value pack step and
// the 16- and 64-token steps. Levels the CPU lacks are
// reported, never counted as passed.
#include <catch2/catch.hpp>
#include <cmath>
#include <iostream>
#include <string>
#include <vector>

#include "llama/kernels/dispatch/cpu_features.hpp"
#include "llama/kernels/numbers/half.hpp"
#include "llama/kernels/products/gemm_f32.hpp"
#include "test_support.hpp"

using namespace llama;

TEST_CASE("f32 GEMM against a plain loop", "[gemm]") {
  uint32_t seed = 8;
  for (int64_t cols : {1, 5, 64, 257, 1000, 2816}) {
    // 66 rows from row 3: whole and partial row tiles (6 rows); tokens off the
    // 16-token vectors; up to 2816 columns: the 340M shape's widest input.
    for (int64_t tokens : {1, 2, 13, 30}) {
      INFO("cols = " << cols << ", tokens = " << tokens);
      const int64_t rows = 71;
      const int64_t ldx = cols + 3, ldy = rows + 2, ldr = rows + 1;
      const auto w = test::random_floats(static_cast<size_t>(rows * cols), seed++, 1.0f);
      const auto x = test::random_floats(static_cast<size_t>(tokens * ldx), seed++, 1.0f);
      const auto r = test::random_floats(static_cast<size_t>(tokens * ldr), seed++, 1.0f);
      std::vector<float> y(static_cast<size_t>(tokens * ldy), -7.f), ya = y;
      const int64_t r0 = 3, r1 = rows - 2;  // the rows outside the range are left alone
      gemm_f32_rows(y.data(), ldy, w.data(), x.data(), ldx, cols, tokens, r0, r1, nullptr, 0);
      gemm_f32_rows(ya.data(), ldy, w.data(), x.data(), ldx, cols, tokens, r0, r1, r.data(), ldr);
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

TEST_CASE("f32 GEMM does not depend on the row split or token count", "[gemm]") {
  // What keeps 1 and 2 threads (different row blocks) and batch sizes on the same bits.
  uint32_t seed = 10;
  const int64_t rows = 100, cols = 600, tokens = 29;  // cols: 37 x 16 + 8
  const auto w = test::random_floats(static_cast<size_t>(rows * cols), seed++, 1.0f);
  const auto x = test::random_floats(static_cast<size_t>(tokens * cols), seed++, 1.0f);
  std::vector<float> whole(static_cast<size_t>(tokens * rows), 0.f), parts = whole, single = whole;
  gemm_f32_rows(whole.data(), rows, w.data(), x.data(), cols, cols, tokens, 0, rows, nullptr, 0);
  for (int64_t r0 = 0; r0 < rows;) {
    const int64_t r1 = std::min(rows, r0 + 1 + r0 % 37);  // ranges of 1 to 37 rows
    gemm_f32_rows(parts.data(), rows, w.data(), x.data(), cols, cols, tokens, r0, r1, nullptr, 0);
    r0 = r1;
  }
  for (int64_t t = 0; t < tokens; ++t) {
    gemm_f32_rows(single.data() + t * rows, rows, w.data(), x.data() + t * cols, cols, cols, 1, 0,
                  rows, nullptr, 0);
  }
  CHECK(parts == whole);
  CHECK(single == whole);
  // Slices of 2 to 5 tokens (a few sequences' decode: up to 4 take rows in the
  // lanes on the avx512 level, tiles otherwise), on row ranges off 16 and 32.
  for (int64_t n = 2; n <= 5; ++n) {
    std::vector<float> few(whole.size(), 0.f);
    for (int64_t t = 0; t < tokens; t += n) {
      const int64_t m = std::min(n, tokens - t);
      gemm_f32_rows(few.data() + t * rows, rows, w.data(), x.data() + t * cols, cols, cols, m, 0,
                    37, nullptr, 0);
      gemm_f32_rows(few.data() + t * rows, rows, w.data(), x.data() + t * cols, cols, cols, m, 37,
                    rows, nullptr, 0);
    }
    INFO(n << " tokens a call");
    CHECK(few == whole);
  }
}

TEST_CASE("f32 GEMM: bf16/f16 weights give the f32 GEMM's bits on the upcast weights",
          "[gemm][half]") {
  std::string ran, lacks;
  for (SimdLevel l : kSimdLevels)
    (simd_level_supported(l) ? ran : lacks) += std::string(" ") + to_string(l);
  std::cout << "typed gemm_f32_rows: levels run:" << ran << "; not run:" << lacks << "\n";
  if (!lacks.empty()) WARN("typed gemm_f32_rows: this CPU lacks" << lacks);
  for (SimdLevel level : kSimdLevels) {
    if (!simd_level_supported(level)) continue;
    for (const bool bf16 : {true, false}) {
      for (int64_t cols : {1, 17, 31, 385, 800}) {
        for (int64_t rows : {1, 47, 49, 97}) {
          for (int64_t tokens : {2, 7, 9, 70}) {
            INFO(to_string(level) << (bf16 ? " bf16 " : " f16 ") << rows << "x" << cols
                                  << ", tokens " << tokens);
            const auto src = test::random_floats(static_cast<size_t>(rows * cols), 5u + rows, 2.0f);
            std::vector<uint16_t> half(src.size());
            std::vector<float> up(src.size());  // the exact f32 values of `half`
            for (size_t i = 0; i < src.size(); ++i) {
              half[i] = bf16 ? f32_to_bf16(src[i]) : f32_to_f16(src[i]);
              up[i] = bf16 ? bf16_to_f32(half[i]) : f16_to_f32(half[i]);
            }
            const int64_t ldx = cols + 5;
            const auto x =
                test::random_floats(static_cast<size_t>(tokens * ldx), 9u + tokens, 2.0f);
            std::vector<float> want(static_cast<size_t>(tokens * rows), -1.0f), got = want;
            gemm_f32_rows(level, want.data(), rows, up.data(), x.data(), ldx, cols, tokens, 0, rows,
                          nullptr, 0);
            // Two row ranges, one starting inside a panel: blocking never changes a bit.
            const int64_t mid = rows / 2;
            const auto type = bf16 ? GemmWeights::bf16 : GemmWeights::f16;
            gemm_f32_rows(level, got.data(), rows, type, half.data(), x.data(), ldx, cols, tokens,
                          0, mid, nullptr, 0);
            gemm_f32_rows(level, got.data(), rows, type, half.data(), x.data(), ldx, cols, tokens,
                          mid, rows, nullptr, 0);
            CHECK(got == want);
          }
        }
      }
    }
  }
}
