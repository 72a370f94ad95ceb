// runq.c's f32 kernels with explicit FMAs (see q8_math.hpp for why).
#include "llama/kernels/q8_math.hpp"
#include "llama/kernels/rope.hpp"

#include <algorithm>
#include <cmath>

namespace llama::q8 {

void rmsnorm(std::span<float> out, std::span<const float> x, std::span<const float> w, float eps) {
  const size_t n = x.size();
  float ss = 0.0f;
  for (size_t j = 0; j < n; ++j) ss = std::fma(x[j], x[j], ss);
  ss /= static_cast<float>(n);
  ss += eps;
  ss = 1.0f / std::sqrt(ss);
  for (size_t j = 0; j < n; ++j) out[j] = w[j] * (ss * x[j]);
}

void rope_rotate(std::span<float> vec, const RopeTable& rope, std::span<const float> cos_v,
                 std::span<const float> sin_v) {
  const auto head_size = static_cast<size_t>(rope.head_dim());
  for (size_t h = 0; h < vec.size(); h += head_size) {
    for (int64_t pair = 0; pair < rope.pairs(); ++pair) {
      const auto [ia, ib] = rope.pair(pair);
      float& a = vec[h + static_cast<size_t>(ia)];
      float& b = vec[h + static_cast<size_t>(ib)];
      const float c = cos_v[static_cast<size_t>(pair)], s = sin_v[static_cast<size_t>(pair)];
      const float v0 = a, v1 = b;
      a = std::fma(v0, c, -(v1 * s));
      b = std::fma(v0, s, v1 * c);
    }
  }
}

void attend_head(std::span<const float> q, const float* keys, const float* values, int64_t stride,
                 int64_t n_pos, std::span<float> scores, std::span<float> out) {
  const auto hs = static_cast<int64_t>(q.size());
  const float root = std::sqrt(static_cast<float>(hs));
  for (int64_t t = 0; t < n_pos; ++t) {
    const float* k = keys + t * stride;
    float score = 0.0f;
    for (int64_t i = 0; i < hs; ++i) score = std::fma(q[static_cast<size_t>(i)], k[i], score);
    scores[static_cast<size_t>(t)] = score / root;
  }
  // runq.c's softmax over [0, n_pos).
  float max_val = scores[0];
  for (int64_t t = 1; t < n_pos; ++t) max_val = std::max(max_val, scores[static_cast<size_t>(t)]);
  float sum = 0.0f;
  for (int64_t t = 0; t < n_pos; ++t) {
    float& s = scores[static_cast<size_t>(t)];
    s = std::exp(s - max_val);
    sum += s;
  }
  for (int64_t t = 0; t < n_pos; ++t) scores[static_cast<size_t>(t)] /= sum;
  std::fill(out.begin(), out.end(), 0.0f);
  for (int64_t t = 0; t < n_pos; ++t) {
    const float* v = values + t * stride;
    const float a = scores[static_cast<size_t>(t)];
    for (int64_t i = 0; i < hs; ++i)
      out[static_cast<size_t>(i)] = std::fma(a, v[i], out[static_cast<size_t>(i)]);
  }
}

}  // namespace llama::q8
