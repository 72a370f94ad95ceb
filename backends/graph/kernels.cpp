// Kernels: loops written for the compiler to vectorize (-fopenmp-simd).
#include "kernels.hpp"

#include <algorithm>
#include <cmath>

#include "llama/math.hpp"

namespace llama::graph {
namespace {

// Four rows at a time so each load of x serves four rows of W. The sums are
// f32 in vector lanes (as OpenBLAS's sgemv): on this machine double
// accumulation ran at 0.6x the speed in cache and the parity cases match either way.
inline void dot4(const float* w, int64_t cols, const float* x, float out[4]) {
  const float* w0 = w;
  const float* w1 = w + cols;
  const float* w2 = w + 2 * cols;
  const float* w3 = w + 3 * cols;
  float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
#pragma omp simd reduction(+ : s0, s1, s2, s3)
  for (int64_t j = 0; j < cols; ++j) {
    const float xj = x[j];
    s0 += w0[j] * xj;
    s1 += w1[j] * xj;
    s2 += w2[j] * xj;
    s3 += w3[j] * xj;
  }
  out[0] = s0;
  out[1] = s1;
  out[2] = s2;
  out[3] = s3;
}

inline float dot1(const float* w, const float* x, int64_t cols) {
  float s = 0;
#pragma omp simd reduction(+ : s)
  for (int64_t j = 0; j < cols; ++j) s += w[j] * x[j];
  return s;
}

inline float finish(float v, const float* residual, int64_t i) {
  return residual ? residual[i] + v : v;
}

}  // namespace

void matvec_rows(float* y, const float* w, const float* x, int64_t cols, int64_t r0, int64_t r1,
                 const float* residual) {
  int64_t i = r0;
  for (; i + 4 <= r1; i += 4) {
    float acc[4];
    dot4(w + i * cols, cols, x, acc);
    for (int64_t k = 0; k < 4; ++k) y[i + k] = finish(acc[k], residual, i + k);
  }
  for (; i < r1; ++i) y[i] = finish(dot1(w + i * cols, x, cols), residual, i);
}

void matmul_rows(float* y, int64_t ldy, const float* w, const float* x, int64_t ldx, int64_t cols,
                 int64_t tokens, int64_t r0, int64_t r1, const float* residual, int64_t ldr) {
  // Blocks of W rows small enough to stay in L2 while every token passes over them.
  const int64_t block = std::max<int64_t>(4, (int64_t{64} * 1024 / 4 / cols) / 4 * 4);
  for (int64_t b0 = r0; b0 < r1; b0 += block) {
    const int64_t b1 = std::min(r1, b0 + block);
    for (int64_t t = 0; t < tokens; ++t) {
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
