// Kernels: the decode product through the register-blocked dot_block (the
// batched one is gemm_f32.cpp); element-wise loops written for the compiler to
// vectorize (-fopenmp-simd).
#include "kernels.hpp"

#include <cmath>

#include "dot_block.hpp"
#include "llama/kernels/math.hpp"

namespace llama::graph {
namespace {

inline float finish(float v, const float* residual, int64_t i) {
  return residual ? residual[i] + v : v;
}

}  // namespace

void matvec_rows(float* y, const float* w, const float* x, int64_t cols, int64_t r0, int64_t r1,
                 const float* residual) {
  // Eight rows per pass over x (eight independent sums in flight), sums in
  // double lanes (see dot_block.hpp).
  float acc[8];
  int64_t i = r0;
  for (; i + 8 <= r1; i += 8) {
    detail::dot_block<8, 1>(w + i * cols, cols, x, cols, cols, acc);
    for (int64_t k = 0; k < 8; ++k) y[i + k] = finish(acc[k], residual, i + k);
  }
  for (; i < r1; ++i) {
    detail::dot_block<1, 1>(w + i * cols, cols, x, cols, cols, acc);
    y[i] = finish(acc[0], residual, i);
  }
}

void rmsnorm_row(float* out, const float* x, const float* w, int64_t n, float eps) {
  const auto len = static_cast<size_t>(n);
  llama::rmsnorm({out, len}, {x, len}, {w, len}, eps);
}

void add_row(float* out, const float* a, const float* b, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
}

void swiglu_row(float* out, const float* gate, const float* up, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    float v = gate[i];
    v *= 1.0f / (1.0f + std::exp(-v));
    out[i] = v * up[i];
  }
}

}  // namespace llama::graph
