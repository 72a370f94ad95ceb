// Shared vector kernels; loops written for the compiler to vectorize.
#include "llama/kernels/math.hpp"

#include <cmath>

#include "llama/sampler.hpp"

namespace llama {

float dot(const float* a, const float* b, int64_t n) {
  double s = 0.0;
#pragma omp simd reduction(+ : s)
  for (int64_t i = 0; i < n; ++i) s += double(a[i]) * double(b[i]);
  return float(s);
}

void rmsnorm(std::span<float> out, std::span<const float> x, std::span<const float> w) {
  const auto n = static_cast<int64_t>(x.size());
  float ss = dot(x.data(), x.data(), n);
  ss /= static_cast<float>(n);
  ss += kRmsNormEps;
  ss = 1.0f / std::sqrt(ss);
  for (int64_t j = 0; j < n; ++j) out[j] = w[j] * (ss * x[j]);
}

void rope_angles(int64_t pos, int64_t head_size, std::span<float> cos_out,
                 std::span<float> sin_out) {
  for (int64_t i = 0; i < head_size; i += 2) {
    const float freq =
        1.0f / std::pow(kRopeTheta, static_cast<float>(i) / static_cast<float>(head_size));
    const float val = static_cast<float>(pos) * freq;
    cos_out[i / 2] = std::cos(val);
    sin_out[i / 2] = std::sin(val);
  }
}

void rope_rotate(std::span<float> vec, int64_t head_size, std::span<const float> cos_v,
                 std::span<const float> sin_v) {
  const auto n = static_cast<int64_t>(vec.size());
  for (int64_t h = 0; h < n; h += head_size) {
    float* v = vec.data() + h;
    for (int64_t i = 0; i < head_size / 2; ++i) {
      const float v0 = v[2 * i], v1 = v[2 * i + 1];
      v[2 * i] = v0 * cos_v[i] - v1 * sin_v[i];
      v[2 * i + 1] = v0 * sin_v[i] + v1 * cos_v[i];
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
