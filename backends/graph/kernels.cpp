// Kernels: products through the register-blocked dot_block; element-wise loops
// written for the compiler to vectorize (-fopenmp-simd).
#include "kernels.hpp"

#include <algorithm>
#include <cmath>

#include "dot_block.hpp"
#include "llama/math.hpp"

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

void matmul_rows(float* y, int64_t ldy, const float* w, const float* x, int64_t ldx, int64_t cols,
                 int64_t tokens, int64_t r0, int64_t r1, const float* residual, int64_t ldr) {
  // Blocks of W rows small enough to stay in L2 while every token passes over
  // them; inside, 4 rows x 4 tokens per pass (16 independent sums).
  const int64_t block = std::max<int64_t>(4, (int64_t{128} * 1024 / 4 / cols) / 4 * 4);
  float acc[16];
  for (int64_t b0 = r0; b0 < r1; b0 += block) {
    const int64_t b1 = std::min(r1, b0 + block);
    int64_t t = 0;
    for (; t + 4 <= tokens; t += 4) {
      const float* xt = x + t * ldx;
      int64_t i = b0;
      for (; i + 4 <= b1; i += 4) {
        detail::dot_block<4, 4>(w + i * cols, cols, xt, ldx, cols, acc);
        for (int64_t r = 0; r < 4; ++r) {
          for (int64_t k = 0; k < 4; ++k) {
            const float* res = residual ? residual + (t + k) * ldr : nullptr;
            y[(t + k) * ldy + i + r] = finish(acc[r * 4 + k], res, i + r);
          }
        }
      }
      for (; i < b1; ++i) {
        detail::dot_block<1, 4>(w + i * cols, cols, xt, ldx, cols, acc);
        for (int64_t k = 0; k < 4; ++k) {
          const float* res = residual ? residual + (t + k) * ldr : nullptr;
          y[(t + k) * ldy + i] = finish(acc[k], res, i);
        }
      }
    }
    for (; t < tokens; ++t) {
      matvec_rows(y + t * ldy, w, x + t * ldx, cols, b0, b1,
                  residual ? residual + t * ldr : nullptr);
    }
  }
}

void rmsnorm_row(float* out, const float* x, const float* w, int64_t n) {
  const auto len = static_cast<size_t>(n);
  llama::rmsnorm({out, len}, {x, len}, {w, len});
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
