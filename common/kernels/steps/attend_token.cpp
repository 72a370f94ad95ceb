// attend_token (steps/attend_token.hpp): run.c's one-token attention for a
// range of heads, the cache rows walked once in position order.
//
// Bits, per head, those of run.c's attend_queries for one query
// (steps/run_c.cpp): each score a double FMA chain from zero over the head in
// order (the products exact in double), rounded to float, divided by
// sqrt(hs); then llama::softmax over the scores; then each output element an
// FMA chain from zero over the positions in order. The avx512 level scores 16
// keys at a time in the lanes (x86/run_c_scores_avx512.hpp); the other levels
// and the last keys take the chain one key at a time.
#include "llama/kernels/steps/attend_token.hpp"

#include <algorithm>
#include <cmath>

#include "kernels/steps/attend_block.hpp"
#include "kernels/x86/run_c_scores_avx512.hpp"
#include "llama/kernels/steps/f16_cache_attention.hpp"
#include "llama/kernels/steps/run_c.hpp"
#include "llama/kernels/steps/runq_c.hpp"
#include "llama/kernels/steps/softmax_argmax.hpp"
#include "llama/kernels/x86/simd_target.hpp"

namespace llama {
namespace {

// Positions ahead whose rows are requested (a hint; past the end it is skipped).
constexpr int64_t kAhead = 8;

LLAMA_ALWAYS_INLINE float score_chain(const float* q, const float* k, int64_t hs, float scale) {
  double s = 0.0;
  for (int64_t i = 0; i < hs; ++i) s += static_cast<double>(q[i]) * static_cast<double>(k[i]);
  return static_cast<float>(s) / scale;
}

template <bool Fma, bool Wide>
LLAMA_ALWAYS_INLINE void attend_token_body(const TokenHeads& t, const float* keys,
                                           const float* values, int64_t stride, int64_t n_pos,
                                           std::span<float> scratch) {
  const int64_t heads = t.h1 - t.h0, hs = t.hs;
  const float scale = std::sqrt(static_cast<float>(hs));
  // The rows the range touches: kv heads [kv0, kv1).
  const int64_t kv0 = t.h0 / t.kv_mul, kv1 = (t.h1 - 1) / t.kv_mul + 1;
  const auto prefetch = [&](const float* rows, int64_t p) {
    if (p >= n_pos) return;
    const float* row = rows + p * stride;
    for (int64_t i = kv0 * hs; i < kv1 * hs; i += 16) __builtin_prefetch(row + i);
  };
  float* st = scratch.data();  // f32 [heads, n_pos]
  int64_t p = 0;
#if LLAMA_HAVE_X86_TARGETS
  if constexpr (Wide) {
    if (hs % 16 == 0) {
      for (; p + 16 <= n_pos; p += 16) {
        for (int64_t j = 0; j < 16; ++j) prefetch(keys, p + 16 + j);
        for (int64_t h = 0; h < heads; ++h) {
          const int64_t head = t.h0 + h;
          detail::score16_double_avx512(t.q + head * hs, hs,
                                        keys + p * stride + head / t.kv_mul * hs, stride, scale,
                                        st + h * n_pos + p);
        }
      }
    }
  }
#endif
  for (; p < n_pos; ++p) {
    prefetch(keys, p + kAhead);
    for (int64_t h = 0; h < heads; ++h) {
      const int64_t head = t.h0 + h;
      st[h * n_pos + p] =
          score_chain(t.q + head * hs, keys + p * stride + head / t.kv_mul * hs, hs, scale);
    }
  }
  for (int64_t h = 0; h < heads; ++h) {
    softmax({st + h * n_pos, static_cast<size_t>(n_pos)});
    std::fill_n(t.out + (t.h0 + h) * hs, hs, 0.0f);
  }
  for (p = 0; p < n_pos; ++p) {
    prefetch(values, p + kAhead);
    for (int64_t h = 0; h < heads; ++h) {
      const int64_t head = t.h0 + h;
      const float a = st[h * n_pos + p];
      const float* v = values + p * stride + head / t.kv_mul * hs;
      float* o = t.out + head * hs;
#pragma omp simd
      for (int64_t i = 0; i < hs; ++i) o[i] = fused_madd<Fma>(a, v[i], o[i]);
    }
  }
}

LLAMA_TARGET_AVX512 void attend_token_avx512(const TokenHeads& t, const float* keys,
                                             const float* values, int64_t stride, int64_t n_pos,
                                             std::span<float> scratch) {
  attend_token_body<true, true>(t, keys, values, stride, n_pos, scratch);
}
LLAMA_TARGET_AVX2 void attend_token_avx2(const TokenHeads& t, const float* keys,
                                         const float* values, int64_t stride, int64_t n_pos,
                                         std::span<float> scratch) {
  attend_token_body<true, false>(t, keys, values, stride, n_pos, scratch);
}
void attend_token_portable(const TokenHeads& t, const float* keys, const float* values,
                           int64_t stride, int64_t n_pos, std::span<float> scratch) {
  attend_token_body<false, false>(t, keys, values, stride, n_pos, scratch);
}

}  // namespace

size_t attend_token_scratch_floats(int64_t heads, int64_t n_pos) {
  return static_cast<size_t>(heads * n_pos);
}

int64_t attend_token_group(int64_t heads, int64_t tokens, int64_t threads, int64_t scratch_floats,
                           int64_t max_pos) {
  const int64_t most = std::max<int64_t>(1, scratch_floats / max_pos);  // heads a scratch holds
  const int64_t groups =
      std::clamp<int64_t>(std::max((2 * threads + tokens - 1) / std::max<int64_t>(tokens, 1),
                                   (heads + most - 1) / most),
                          1, heads);
  return (heads + groups - 1) / groups;
}

// attend_head per head: what attend_queries gives a query (q8, and run.c's
// heads that are not a multiple of kMixWidth, which its blocks leave to
// attend_head).
namespace {
template <class AttendHead, class Element>
void by_heads(const AttendHead& attend_head, const TokenHeads& t, const Element* keys,
              const Element* values, int64_t stride, int64_t n_pos, std::span<float> scratch) {
  for (int64_t h = t.h0; h < t.h1; ++h) {
    const int64_t kv = h / t.kv_mul * t.hs;
    attend_head(std::span<const float>(t.q + h * t.hs, static_cast<size_t>(t.hs)), keys + kv,
                values + kv, stride, n_pos, scratch,
                std::span<float>(t.out + h * t.hs, static_cast<size_t>(t.hs)));
  }
}
}  // namespace

void attend_token_at_level(SimdLevel level, const TokenHeads& t, const float* keys,
                           const float* values, int64_t stride, int64_t n_pos,
                           std::span<float> scratch) {
  if (t.hs % detail::kMixWidth != 0) {
    const auto head = [level](auto... args) { attend_head_at_level(level, args...); };
    by_heads(head, t, keys, values, stride, n_pos, scratch.first(static_cast<size_t>(n_pos)));
    return;
  }
  LLAMA_SIMD_DISPATCH(runnable_level(level), attend_token,
                      (t, keys, values, stride, n_pos, scratch));
}

void attend_token(const TokenHeads& t, const float* keys, const float* values, int64_t stride,
                  int64_t n_pos, std::span<float> scratch) {
  attend_token_at_level(simd_level(), t, keys, values, stride, n_pos, scratch);
}

void attend_token_f16(const TokenHeads& t, const uint16_t* keys, const uint16_t* values,
                      int64_t stride, int64_t n_pos, std::span<float> scratch) {
  const auto head = [](auto... args) { attend_head_f16(args...); };
  by_heads(head, t, keys, values, stride, n_pos,
           scratch.first(attend_f16_scratch_floats(t.hs, n_pos, 1)));
}

namespace q8 {
void attend_token(const TokenHeads& t, const float* keys, const float* values, int64_t stride,
                  int64_t n_pos, std::span<float> scratch) {
  const auto head = [](auto... args) { q8::attend_head(args...); };
  by_heads(head, t, keys, values, stride, n_pos, scratch.first(static_cast<size_t>(n_pos)));
}
}  // namespace q8

}  // namespace llama
