// Shared vector kernels and the f32 rotary embedding; loops written for the
// compiler to vectorize.
#include "llama/kernels/math.hpp"

#include <cmath>

#include "llama/kernels/rope.hpp"
#include "llama/sampler.hpp"

namespace llama {

float dot(const float* a, const float* b, int64_t n) {
  double s = 0.0;
#pragma omp simd reduction(+ : s)
  for (int64_t i = 0; i < n; ++i) s += double(a[i]) * double(b[i]);
  return float(s);
}

void rmsnorm(std::span<float> out, std::span<const float> x, std::span<const float> w, float eps) {
  const auto n = static_cast<int64_t>(x.size());
  float ss = dot(x.data(), x.data(), n);
  ss /= static_cast<float>(n);
  ss += eps;
  ss = 1.0f / std::sqrt(ss);
  for (int64_t j = 0; j < n; ++j) out[j] = w[j] * (ss * x[j]);
}

void RopeTable::angles(int64_t pos, std::span<float> cos_out, std::span<float> sin_out) const {
  for (int64_t i = 0; i < pairs(); ++i) {
    const float val = static_cast<float>(pos) * inv_freq_[static_cast<size_t>(i)];
    cos_out[static_cast<size_t>(i)] = std::cos(val);
    sin_out[static_cast<size_t>(i)] = std::sin(val);
  }
}

void rope_rotate(std::span<float> vec, const RopeTable& rope, std::span<const float> cos_v,
                 std::span<const float> sin_v) {
  const auto n = static_cast<int64_t>(vec.size());
  const int64_t head_size = rope.head_dim(), pairs = rope.pairs();
  // Pair i is (first + i * stride, first + i * stride + step).
  const bool halves = rope.layout() == RopeLayout::halves;
  const int64_t stride = halves ? 1 : 2, step = halves ? pairs : 1;
  for (int64_t h = 0; h < n; h += head_size) {
    float* v = vec.data() + h;
    for (int64_t i = 0; i < pairs; ++i) {
      float* a = v + i * stride;
      float* b = a + step;
      const float v0 = *a, v1 = *b;
      *a = v0 * cos_v[i] - v1 * sin_v[i];
      *b = v0 * sin_v[i] + v1 * cos_v[i];
    }
  }
}

void swiglu(std::span<float> h1, std::span<const float> h3) {
  const size_t n = h1.size();
  for (size_t i = 0; i < n; ++i) {
    float v = h1[i];
    v *= 1.0f / (1.0f + std::exp(-v));
    h1[i] = v * h3[i];
  }
}

void attend_head(std::span<const float> q, const float* keys, const float* values, int64_t stride,
                 int64_t n_pos, std::span<float> scores, std::span<float> out) {
  const auto head_size = static_cast<int64_t>(q.size());
  const float scale = std::sqrt(static_cast<float>(head_size));
  for (int64_t t = 0; t < n_pos; ++t) {
    scores[t] = dot(q.data(), keys + t * stride, head_size) / scale;
  }
  softmax(scores.first(static_cast<size_t>(n_pos)));
  float* o = out.data();
  for (int64_t i = 0; i < head_size; ++i) o[i] = 0.0f;
  for (int64_t t = 0; t < n_pos; ++t) {
    const float a = scores[t];
    const float* v = values + t * stride;
#pragma omp simd
    for (int64_t i = 0; i < head_size; ++i) o[i] += a * v[i];
  }
}

}  // namespace llama
