// Shared vector kernels and the f32 rotary embedding; loops written for the
// compiler to vectorize. Each
// hot one is written once (an always-inline body) and compiled for every
// SimdLevel, picked at run time, since the build's x86-64-v2 baseline would
// vectorize it with SSE only. Multiply-adds are written as fused_madd (what
// the reference builds' FMA contraction computes, also on the portable
// level); the double reductions' vector width differs between levels, so
// their last bits may too.
#include "llama/kernels/steps/run_c.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "kernels/steps/attend_block.hpp"
#include "kernels/steps/attend_head_entries.hpp"
#include "kernels/steps/vector_bodies.hpp"
#include "kernels/x86/expf_lanes.hpp"
#include "llama/error.hpp"
#include "llama/kernels/dispatch/cpu_features.hpp"
#include "llama/kernels/steps/rope.hpp"
#include "llama/kernels/steps/runq_c.hpp"
#include "llama/kernels/steps/softmax_argmax.hpp"
#include "llama/kernels/x86/simd_target.hpp"

namespace llama {
namespace {

template <bool Fma>
LLAMA_ALWAYS_INLINE float dot_body(const float* a, const float* b, int64_t n) {
  double s = 0.0;
#pragma omp simd reduction(+ : s)
  for (int64_t i = 0; i < n; ++i) s += double(a[i]) * double(b[i]);
  return float(s);
}

template <bool Fma>
LLAMA_ALWAYS_INLINE void rmsnorm_body(std::span<float> out, std::span<const float> x,
                                      std::span<const float> w, float eps) {
  const auto n = static_cast<int64_t>(x.size());
  bodies::rmsnorm_scale(out, x, w, dot_body<Fma>(x.data(), x.data(), n), eps);
}

template <bool Fma>
LLAMA_ALWAYS_INLINE void swiglu_body(float* out, const float* gate, const float* up, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    float v = gate[i];
    v *= 1.0f / (1.0f + std::exp(-v));
    out[i] = v * up[i];
  }
}

template <bool Fma>
LLAMA_ALWAYS_INLINE void attend_body(std::span<const float> q, const float* keys,
                                     const float* values, int64_t stride, int64_t n_pos,
                                     std::span<float> scores, std::span<float> out) {
  const auto head_size = static_cast<int64_t>(q.size());
  const float scale = std::sqrt(static_cast<float>(head_size));
  // Rows 16 positions ahead are asked for: a head's rows are kv_dim floats
  // apart, which the hardware prefetchers follow badly, and at depth decode
  // attention waited on memory (110M at position 900: 66 MB of cache a token).
  constexpr int64_t ahead = 16;
  const auto prefetch = [&](const float* rows, int64_t t) {
    if (t >= n_pos) return;
    for (int64_t i = 0; i < head_size; i += 16) __builtin_prefetch(rows + t * stride + i);
  };
  for (int64_t t = 0; t < n_pos; ++t) {
    prefetch(keys, t + ahead);
    scores[t] = dot_body<Fma>(q.data(), keys + t * stride, head_size) / scale;
  }
  for (int64_t t = 0; t < std::min(n_pos, ahead); ++t) prefetch(values, t);
  softmax(scores.first(static_cast<size_t>(n_pos)));
  float* o = out.data();
  for (int64_t i = 0; i < head_size; ++i) o[i] = 0.0f;
  for (int64_t t = 0; t < n_pos; ++t) {
    prefetch(values, t + ahead);
    const float a = scores[t];
    const float* v = values + t * stride;
#pragma omp simd
    for (int64_t i = 0; i < head_size; ++i) o[i] = fused_madd<Fma>(a, v[i], o[i]);
  }
}

// st[t * L + lane] = float(query lane . key t, summed in double) / scale for t
// in [0, K): run.c's score arithmetic (products exact in double, the sum
// rounded once to float) with each query's sum taken in head order, one chain
// per lane (attend_head's vector reduction adds the same products in another
// order: the double sums may differ in their last bits, the scores rarely).
// Queries transposed in qt (f32 [hs, L]). An exact product, then one
// rounding: the same with or without FMA.
struct DoubleScore {
  float scale;
  template <int64_t K>
  LLAMA_ALWAYS_INLINE void block(const float* qt, int64_t hs, const float* k, int64_t stride,
                                 float* st) const {
    constexpr int64_t L = q8::kAttendQueries;
    double acc[K][L] = {};
    for (int64_t i = 0; i < hs; ++i) {
      const float* qi = qt + i * L;
#pragma GCC unroll 4
      for (int64_t j = 0; j < K; ++j) {
        const auto kj = static_cast<double>(k[j * stride + i]);
#pragma omp simd
        for (int64_t lane = 0; lane < L; ++lane) acc[j][lane] += static_cast<double>(qi[lane]) * kj;
      }
    }
    for (int64_t j = 0; j < K; ++j) {
#pragma omp simd
      for (int64_t lane = 0; lane < L; ++lane) {
        st[j * L + lane] = static_cast<float>(acc[j][lane]) / scale;
      }
    }
  }
};

// run.c's kernels for attend_query_blocks: DoubleScore's block scores (the
// AVX-512 body where it takes the head) and the block softmax and value sums
// at Level.
template <SimdLevel Level>
struct DoubleAttention {
  LLAMA_ALWAYS_INLINE void score_block(float scale, const float* q, int64_t q_ld, int64_t m,
                                       int64_t hs, const float* keys, int64_t stride,
                                       int64_t n_keys, float* qt, float* st) const {
    if (Level == SimdLevel::avx512 && hs <= detail::kMaxBlockHead) {
      detail::score_query_block_double_avx512(scale, q, q_ld, m, hs, keys, stride, n_keys, st);
    } else {
      detail::score_query_block(DoubleScore{scale}, q, q_ld, m, hs, keys, stride, n_keys, qt, st);
    }
  }
  LLAMA_ALWAYS_INLINE void mix_block(float* st, int64_t n_keys, const int64_t* n_pos,
                                     const float* values, int64_t stride, int64_t hs, int64_t m,
                                     float* out, int64_t out_ld) const {
    detail::softmax_mix_block_at_level(Level, st, n_keys, n_pos, values, stride, hs, m, out,
                                       out_ld);
  }
};

// A prompt's attention for one head: blocks of q8::kAttendQueries queries in
// the lanes; heads that are not a multiple of kMixWidth take attend_body per
// query.
template <bool Fma, SimdLevel Level>
LLAMA_ALWAYS_INLINE void attend_queries_body(const float* q, int64_t q_ld, int64_t n,
                                             int64_t first_pos, int64_t hs, const float* keys,
                                             const float* values, int64_t stride,
                                             std::span<float> scratch, float* out, int64_t out_ld) {
  if (hs % detail::kMixWidth == 0) {
    detail::attend_query_blocks(DoubleAttention<Level>{}, q, q_ld, n, first_pos, hs, keys, values,
                                stride, scratch, out, out_ld);
    return;
  }
  for (int64_t i = 0; i < n; ++i, q += q_ld, out += out_ld) {
    const int64_t n_pos = first_pos + i + 1;
    attend_body<Fma>({q, static_cast<size_t>(hs)}, keys, values, stride, n_pos,
                     scratch.first(static_cast<size_t>(n_pos)), {out, static_cast<size_t>(hs)});
  }
}

LLAMA_SIMD_VARIANTS(float, dot, dot_body, (const float* a, const float* b, int64_t n), (a, b, n))
LLAMA_SIMD_VARIANTS(void, rmsnorm, rmsnorm_body,
                    (std::span<float> out, std::span<const float> x, std::span<const float> w,
                     float eps),
                    (out, x, w, eps))
LLAMA_SIMD_VARIANTS(void, rope, bodies::rope,
                    (std::span<float> vec, int64_t head_size, int64_t stride, int64_t step,
                     std::span<const float> cos_v, std::span<const float> sin_v),
                    (vec, head_size, stride, step, cos_v, sin_v))
LLAMA_SIMD_VARIANTS(void, swiglu, swiglu_body,
                    (float* out, const float* gate, const float* up, size_t n), (out, gate, up, n))
LLAMA_SIMD_VARIANTS(void, attend, attend_body,
                    (std::span<const float> q, const float* keys, const float* values,
                     int64_t stride, int64_t n_pos, std::span<float> scores, std::span<float> out),
                    (q, keys, values, stride, n_pos, scores, out))
LLAMA_TARGET_AVX512 void attend_queries_avx512(const float* q, int64_t q_ld, int64_t n,
                                               int64_t first_pos, int64_t hs, const float* keys,
                                               const float* values, int64_t stride,
                                               std::span<float> scratch, float* out,
                                               int64_t out_ld) {
  attend_queries_body<true, SimdLevel::avx512>(q, q_ld, n, first_pos, hs, keys, values, stride,
                                               scratch, out, out_ld);
}
LLAMA_TARGET_AVX2 void attend_queries_avx2(const float* q, int64_t q_ld, int64_t n,
                                           int64_t first_pos, int64_t hs, const float* keys,
                                           const float* values, int64_t stride,
                                           std::span<float> scratch, float* out, int64_t out_ld) {
  attend_queries_body<true, SimdLevel::avx2>(q, q_ld, n, first_pos, hs, keys, values, stride,
                                             scratch, out, out_ld);
}
void attend_queries_portable(const float* q, int64_t q_ld, int64_t n, int64_t first_pos, int64_t hs,
                             const float* keys, const float* values, int64_t stride,
                             std::span<float> scratch, float* out, int64_t out_ld) {
  attend_queries_body<false, SimdLevel::portable>(q, q_ld, n, first_pos, hs, keys, values, stride,
                                                  scratch, out, out_ld);
}

}  // namespace

float dot(const float* a, const float* b, int64_t n) {
  LLAMA_SIMD_DISPATCH(simd_level(), dot, (a, b, n));
}

void rmsnorm(std::span<float> out, std::span<const float> x, std::span<const float> w, float eps) {
  LLAMA_SIMD_DISPATCH(simd_level(), rmsnorm, (out, x, w, eps));
}

void rope_rotate(std::span<float> vec, const RopeTable& rope, std::span<const float> cos_v,
                 std::span<const float> sin_v) {
  const bool halves = rope.layout() == RopeLayout::halves;
  const int64_t stride = halves ? 1 : 2, step = halves ? rope.pairs() : 1;
  LLAMA_SIMD_DISPATCH(simd_level(), rope, (vec, rope.head_dim(), stride, step, cos_v, sin_v));
}

void swiglu(std::span<float> h1, std::span<const float> h3) { swiglu(h1, h1, h3); }

void swiglu(std::span<float> out, std::span<const float> gate, std::span<const float> up) {
  if (gate.size() != out.size() || up.size() != out.size()) {
    throw Error("swiglu: " + std::to_string(out.size()) + " outputs from " +
                std::to_string(gate.size()) + " gates and " + std::to_string(up.size()) + " ups");
  }
  // The exp is nearly all of the cost, and libm's goes one value at a time;
  // the avx512 lanes repeat its algorithm (x86/expf_lanes.hpp), so the bits
  // stay the loop's.
  if (runnable_level(simd_level()) == SimdLevel::avx512 && q8::detail::vector_expf_matches_libm()) {
    q8::detail::swiglu_avx512(out.data(), gate.data(), up.data(), static_cast<int64_t>(out.size()));
    return;
  }
  LLAMA_SIMD_DISPATCH(simd_level(), swiglu, (out.data(), gate.data(), up.data(), out.size()));
}

// attend_head and attend_head_at_level over run.c's attend_<level> kernels.
LLAMA_ATTEND_HEAD_ENTRIES(attend)

void attend_queries(const float* q, int64_t q_ld, int64_t n, int64_t first_pos, int64_t head_size,
                    const float* keys, const float* values, int64_t stride,
                    std::span<float> scratch, float* out, int64_t out_ld) {
  LLAMA_SIMD_DISPATCH(
      simd_level(), attend_queries,
      (q, q_ld, n, first_pos, head_size, keys, values, stride, scratch, out, out_ld));
}

}  // namespace llama
