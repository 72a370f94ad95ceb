// Graph's batch GEMM with bf16/f16 weights (backends/graph/gemm_f32.cpp's
// typed matmul_rows, the exact prefill of bf16/f16 models on graph): on every
// SimdLevel this CPU runs, the same bits as the f32 GEMM on the exactly upcast
// weights, over sizes off the panel (48 rows), the column block (384), the
// 16-value pack step and the 8-token micro tile. Levels the CPU lacks are
// reported, never counted as passed.
#include <catch2/catch.hpp>
#include <iostream>
#include <string>
#include <vector>

#include "graph/kernels.hpp"
#include "llama/kernels/cpu_features.hpp"
#include "llama/kernels/half.hpp"
#include "test_support.hpp"

using namespace llama;

namespace {}  // namespace

TEST_CASE("graph GEMM: bf16/f16 weights give the f32 GEMM's bits on the upcast weights",
          "[graph][half]") {
  std::string ran, lacks;
  for (SimdLevel l : kSimdLevels)
    (simd_level_supported(l) ? ran : lacks) += std::string(" ") + to_string(l);
  std::cout << "graph typed matmul_rows: levels run:" << ran << "; not run:" << lacks << "\n";
  if (!lacks.empty()) WARN("graph typed matmul_rows: this CPU lacks" << lacks);
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
            graph::matmul_rows(level, want.data(), rows, up.data(), x.data(), ldx, cols, tokens, 0,
                               rows, nullptr, 0);
            // Two row ranges, one starting inside a panel: blocking never changes a bit.
            const int64_t mid = rows / 2;
            const auto type = bf16 ? graph::GemmWeights::bf16 : graph::GemmWeights::f16;
            graph::matmul_rows(level, got.data(), rows, type, half.data(), x.data(), ldx, cols,
                               tokens, 0, mid, nullptr, 0);
            graph::matmul_rows(level, got.data(), rows, type, half.data(), x.data(), ldx, cols,
                               tokens, mid, rows, nullptr, 0);
            CHECK(got == want);
          }
        }
      }
    }
  }
}
