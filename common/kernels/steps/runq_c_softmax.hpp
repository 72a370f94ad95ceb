// Private to the core: runq.c's softmax and value sums over one head's
// scores, shared by decode attention (runq_c_attention.cpp) and a prompt
// block's fallback for heads of odd sizes (runq_c_attention_block.cpp). Always-inline
// bodies, compiled per SimdLevel by their callers.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "kernels/x86/expf_lanes.hpp"
#include "kernels/x86/runq_c_softmax_avx512.hpp"
#include "llama/kernels/x86/simd_target.hpp"

namespace llama::q8::detail {

// Positions ahead of the one being read whose cache rows are prefetched: a
// head's rows are kv_dim floats apart, a stride the hardware prefetchers
// follow badly, and at depth (110M at position 900: 66 MB of cache per token)
// decode attention waited on memory.
constexpr int64_t kPrefetchAhead = 16;

// Asks for row t's head (hs floats at rows + t * stride) when t < n_pos.
LLAMA_ALWAYS_INLINE void prefetch_row(const float* rows, int64_t t, int64_t n_pos, int64_t stride,
                                      int64_t hs) {
  if (t >= n_pos) return;
  const float* r = rows + t * stride;
  for (int64_t i = 0; i < hs; i += 16) __builtin_prefetch(r + i);
}

// out = sum_t p_t v_t for a head of HS elements: the sums from zero, FMAs in
// position order (softmax_mix's), held in registers.
template <bool Fma, int64_t HS>
LLAMA_ALWAYS_INLINE void mix_fixed(const float* p, int64_t n_pos, const float* values,
                                   int64_t stride, float* out) {
  float acc[HS] = {};
  for (int64_t t = 0; t < n_pos; ++t) {
    prefetch_row(values, t + kPrefetchAhead, n_pos, stride, HS);
    const float* v = values + t * stride;
    const float a = p[t];
#pragma omp simd
    for (int64_t i = 0; i < HS; ++i) acc[i] = std::fma(a, v[i], acc[i]);
  }
  for (int64_t i = 0; i < HS; ++i) out[i] = acc[i];
}

// runq.c's softmax over scores[0, n_pos), then out = sum_t p_t v_t. Wide:
// the level has AVX-512 (the max and the exps in its lanes,
// x86/runq_c_softmax_avx512.hpp and x86/expf_lanes.hpp; the sum stays runq.c's
// chain in position order).
template <bool Fma, bool Wide>
LLAMA_ALWAYS_INLINE void softmax_mix(float* scores, int64_t n_pos, const float* values,
                                     int64_t stride, float* out, int64_t hs) {
  float sum = 0.0f;
#if LLAMA_HAVE_X86_TARGETS
  if (Wide && vector_expf_matches_libm()) {
    expf_shifted_avx512(scores, n_pos, max_avx512(scores, n_pos));
    for (int64_t t = 0; t < n_pos; ++t) sum += scores[t];
  } else
#endif
  {
    float max_val = scores[0];
    for (int64_t t = 1; t < n_pos; ++t) max_val = std::max(max_val, scores[t]);
    for (int64_t t = 0; t < n_pos; ++t) {
      scores[t] = std::exp(scores[t] - max_val);
      sum += scores[t];
    }
  }
  for (int64_t t = 0; t < n_pos; ++t) scores[t] /= sum;
  // Heads of up to 128 elements keep the sums in registers (through memory,
  // each position's FMAs waited on the previous position's stores).
  switch (hs) {
    case 16:
      return mix_fixed<Fma, 16>(scores, n_pos, values, stride, out);
    case 32:
      return mix_fixed<Fma, 32>(scores, n_pos, values, stride, out);
    case 48:
      return mix_fixed<Fma, 48>(scores, n_pos, values, stride, out);
    case 64:
      return mix_fixed<Fma, 64>(scores, n_pos, values, stride, out);
    case 80:
      return mix_fixed<Fma, 80>(scores, n_pos, values, stride, out);
    case 96:
      return mix_fixed<Fma, 96>(scores, n_pos, values, stride, out);
    case 112:
      return mix_fixed<Fma, 112>(scores, n_pos, values, stride, out);
    case 128:
      return mix_fixed<Fma, 128>(scores, n_pos, values, stride, out);
    default:
      break;
  }
  std::fill(out, out + hs, 0.0f);
  for (int64_t t = 0; t < n_pos; ++t) {
    prefetch_row(values, t + kPrefetchAhead, n_pos, stride, hs);
    const float* v = values + t * stride;
    const float a = scores[t];
    for (int64_t i = 0; i < hs; ++i) out[i] = std::fma(a, v[i], out[i]);
  }
}

}  // namespace llama::q8::detail
