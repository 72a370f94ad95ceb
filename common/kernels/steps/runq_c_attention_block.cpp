// runq.c's attention for a block of queries of one head (a prompt): the
// block's queries in the lanes of a register against each key, then
// softmax and the value sums in the lanes too, each lane the same operations
// in the same order as attend_head (runq_c_attention.cpp), so the same bits.
// Bodies are compiled per SimdLevel.
#include <algorithm>
#include <cmath>

#include "kernels/steps/attend_block.hpp"
#include "kernels/steps/runq_c_softmax.hpp"
#include "llama/kernels/dispatch/cpu_features.hpp"
#include "llama/kernels/steps/runq_c.hpp"
#include "llama/kernels/x86/simd_target.hpp"

namespace llama::q8 {
namespace {

using detail::softmax_mix;

// st[t * kQueries + lane] = (query lane . key t) / root for t in [t0, t0 + K),
// queries transposed in qt (f32 [hs, kQueries]): runq.c's f32 sums.
struct FloatScore {
  float root;
  template <int64_t K>
  LLAMA_ALWAYS_INLINE void block(const float* qt, int64_t hs, const float* k, int64_t stride,
                                 float* st) const {
    constexpr int64_t L = kAttendQueries;
    float acc[K][L] = {};
    for (int64_t i = 0; i < hs; ++i) {
      const float* qi = qt + i * L;
#pragma GCC unroll 4
      for (int64_t j = 0; j < K; ++j) {
        const float kj = k[j * stride + i];
#pragma omp simd
        for (int64_t lane = 0; lane < L; ++lane)
          acc[j][lane] = std::fma(qi[lane], kj, acc[j][lane]);
      }
    }
    for (int64_t j = 0; j < K; ++j) {
#pragma omp simd
      for (int64_t lane = 0; lane < L; ++lane) st[j * L + lane] = acc[j][lane] / root;
    }
  }
};

using llama::detail::kMixWidth;

// softmax_mix for a whole block, the queries in lanes: st holds the scores
// (f32 [n_keys, L]); lane l's query uses keys [0, n_pos[l]). Per lane the same
// operations in the same order as softmax_mix (the max, exp and running sum in
// position order, then the FMAs into each output element from zero), so the
// same bits; only keys past a lane's position are skipped by a mask. hs must
// be a multiple of kMixWidth. Output row of lane l: out + l * out_ld, l < m.
template <bool Fma, bool Wide>
LLAMA_ALWAYS_INLINE void softmax_mix_block(float* st, int64_t n_keys, const int64_t* n_pos,
                                           const float* values, int64_t stride, int64_t hs,
                                           int64_t m, float* out, int64_t out_ld) {
  constexpr int64_t L = kAttendQueries;
  float max_val[L], sum[L];
  for (int64_t lane = 0; lane < L; ++lane) {
    max_val[lane] = st[lane];
    sum[lane] = 0.0f;
  }
  if constexpr (Wide) {
    // The loop below compiled to scalar code with a branch per lane.
    llama::detail::block_max_avx512(st, n_keys, n_pos, max_val);
  } else {
    for (int64_t t = 1; t < n_keys; ++t) {
      for (int64_t lane = 0; lane < L; ++lane) {
        if (t < n_pos[lane]) max_val[lane] = std::max(max_val[lane], st[t * L + lane]);
      }
    }
  }
  if (Wide && detail::vector_expf_matches_libm()) {
    detail::expf_lanes_avx512(st, n_keys, n_pos, max_val, sum);
  } else {
    for (int64_t t = 0; t < n_keys; ++t) {
      for (int64_t lane = 0; lane < L; ++lane) {
        if (t >= n_pos[lane]) continue;
        const float e = std::exp(st[t * L + lane] - max_val[lane]);
        st[t * L + lane] = e;
        sum[lane] += e;
      }
    }
  }
  if constexpr (Wide) {
    // The same divisions, and the same value sums with the head elements in
    // the lanes (attend_block_avx512.cpp).
    llama::detail::block_divide_avx512(st, n_keys, n_pos, sum);
    llama::detail::mix_block_avx512(st, n_pos, values, stride, hs, m, out, out_ld);
    return;
  }
  for (int64_t t = 0; t < n_keys; ++t) {
#pragma omp simd
    for (int64_t lane = 0; lane < L; ++lane) {
      if (t < n_pos[lane]) st[t * L + lane] /= sum[lane];
    }
  }
  for (int64_t i0 = 0; i0 < hs; i0 += kMixWidth) {
    float acc[kMixWidth][L] = {};
    for (int64_t t = 0; t < n_keys; ++t) {
      const float* p = st + t * L;
      const float* v = values + t * stride + i0;
#pragma GCC unroll 16
      for (int64_t i = 0; i < kMixWidth; ++i) {
        const float vi = v[i];
#pragma omp simd
        for (int64_t lane = 0; lane < L; ++lane) {
          acc[i][lane] = t < n_pos[lane] ? std::fma(p[lane], vi, acc[i][lane]) : acc[i][lane];
        }
      }
    }
    for (int64_t lane = 0; lane < m; ++lane) {
      for (int64_t i = 0; i < kMixWidth; ++i) out[lane * out_ld + i0 + i] = acc[i][lane];
    }
  }
}

// runq.c's kernels for attend_query_blocks: FloatScore's block scores, then
// the block softmax and value sums, or for a head that is not a multiple of
// kMixWidth softmax_mix for each query alone over its column of the scores.
template <bool Fma, bool Wide>
struct FloatAttention {
  LLAMA_ALWAYS_INLINE void score_block(float root, const float* q, int64_t q_ld, int64_t m,
                                       int64_t hs, const float* keys, int64_t stride,
                                       int64_t n_keys, float* qt, float* st) const {
    llama::detail::score_query_block(FloatScore{root}, q, q_ld, m, hs, keys, stride, n_keys, qt,
                                     st);
  }
  LLAMA_ALWAYS_INLINE void mix_block(float* st, int64_t n_keys, const int64_t* n_pos,
                                     const float* values, int64_t stride, int64_t hs, int64_t m,
                                     float* out, int64_t out_ld) const {
    if (hs % kMixWidth != 0) {
      constexpr int64_t L = kAttendQueries;
      float* p = st + n_keys * L;  // f32 [n_keys]: one query's scores
      for (int64_t lane = 0; lane < m; ++lane, out += out_ld) {
        const int64_t k = n_pos[lane];
        for (int64_t u = 0; u < k; ++u) p[u] = st[u * L + lane];
        softmax_mix<Fma, Wide>(p, k, values, stride, out, hs);
      }
      return;
    }
    softmax_mix_block<Fma, Wide>(st, n_keys, n_pos, values, stride, hs, m, out, out_ld);
  }
};

LLAMA_TARGET_AVX512 void attend_queries_avx512(const float* q, int64_t q_ld, int64_t n,
                                               int64_t first_pos, int64_t hs, const float* keys,
                                               const float* values, int64_t stride,
                                               std::span<float> scratch, float* out,
                                               int64_t out_ld) {
  llama::detail::attend_query_blocks(FloatAttention<true, true>{}, q, q_ld, n, first_pos, hs, keys,
                                     values, stride, scratch, out, out_ld);
}
LLAMA_TARGET_AVX2 void attend_queries_avx2(const float* q, int64_t q_ld, int64_t n,
                                           int64_t first_pos, int64_t hs, const float* keys,
                                           const float* values, int64_t stride,
                                           std::span<float> scratch, float* out, int64_t out_ld) {
  llama::detail::attend_query_blocks(FloatAttention<true, false>{}, q, q_ld, n, first_pos, hs, keys,
                                     values, stride, scratch, out, out_ld);
}
void attend_queries_portable(const float* q, int64_t q_ld, int64_t n, int64_t first_pos, int64_t hs,
                             const float* keys, const float* values, int64_t stride,
                             std::span<float> scratch, float* out, int64_t out_ld) {
  llama::detail::attend_query_blocks(FloatAttention<false, false>{}, q, q_ld, n, first_pos, hs,
                                     keys, values, stride, scratch, out, out_ld);
}

// The block softmax and value sums for run.c's attention (attend_block.hpp).
LLAMA_TARGET_AVX512 void softmax_mix_block_avx512(float* st, int64_t n_keys, const int64_t* n_pos,
                                                  const float* values, int64_t stride, int64_t hs,
                                                  int64_t m, float* out, int64_t out_ld) {
  softmax_mix_block<true, true>(st, n_keys, n_pos, values, stride, hs, m, out, out_ld);
}
LLAMA_TARGET_AVX2 void softmax_mix_block_avx2(float* st, int64_t n_keys, const int64_t* n_pos,
                                              const float* values, int64_t stride, int64_t hs,
                                              int64_t m, float* out, int64_t out_ld) {
  softmax_mix_block<true, false>(st, n_keys, n_pos, values, stride, hs, m, out, out_ld);
}
void softmax_mix_block_portable(float* st, int64_t n_keys, const int64_t* n_pos,
                                const float* values, int64_t stride, int64_t hs, int64_t m,
                                float* out, int64_t out_ld) {
  softmax_mix_block<false, false>(st, n_keys, n_pos, values, stride, hs, m, out, out_ld);
}

}  // namespace

size_t attend_queries_scratch(int64_t head_size, int64_t n_keys) {
  return static_cast<size_t>(kAttendQueries * (head_size + n_keys) + n_keys);
}

void attend_queries(const float* q, int64_t q_ld, int64_t n, int64_t first_pos, int64_t head_size,
                    const float* keys, const float* values, int64_t stride,
                    std::span<float> scratch, float* out, int64_t out_ld) {
  attend_queries_at_level(simd_level(), q, q_ld, n, first_pos, head_size, keys, values, stride,
                          scratch, out, out_ld);
}

void attend_queries_at_level(SimdLevel level, const float* q, int64_t q_ld, int64_t n,
                             int64_t first_pos, int64_t head_size, const float* keys,
                             const float* values, int64_t stride, std::span<float> scratch,
                             float* out, int64_t out_ld) {
  LLAMA_SIMD_DISPATCH(
      runnable_level(level), attend_queries,
      (q, q_ld, n, first_pos, head_size, keys, values, stride, scratch, out, out_ld));
}

}  // namespace llama::q8

namespace llama::detail {

void softmax_mix_block_at_level(SimdLevel level, float* st, int64_t n_keys, const int64_t* n_pos,
                                const float* values, int64_t stride, int64_t hs, int64_t m,
                                float* out, int64_t out_ld) {
  LLAMA_SIMD_DISPATCH(runnable_level(level), q8::softmax_mix_block,
                      (st, n_keys, n_pos, values, stride, hs, m, out, out_ld));
}

}  // namespace llama::detail
