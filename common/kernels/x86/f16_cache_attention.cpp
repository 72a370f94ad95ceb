// Attention over an f16 KV cache (attention_f16.hpp): one body, compiled for
// each SimdLevel with that level's f16 conversions (F16C's vcvtph2ps /
// vcvtps2ph on avx2 and avx512, half.hpp's bit manipulation on portable: the
// same values). A block of queries of one head widens each key and value row
// once and shares it, which is what makes a prompt's attention cheaper than
// one query at a time.
#include "llama/kernels/steps/f16_cache_attention.hpp"

#include <immintrin.h>

#include <algorithm>
#include <cmath>

#include "kernels/x86/f16_rows.hpp"
#include "kernels/x86/simd.hpp"
#include "llama/error.hpp"
#include "llama/kernels/numbers/half.hpp"
#include "llama/kernels/x86/simd_target.hpp"

namespace llama {
namespace {

constexpr int64_t kLanes = 16;     // one zmm of f32
constexpr int64_t kSlots = 64;     // ggml_vec_dot_f16's 4 accumulators of 16 lanes
constexpr int64_t kMaxHead = 256;  // head sizes the kernel takes (stack sums)
constexpr int64_t kAhead = 16;     // rows prefetched ahead: a head's rows are stride apart

// ggml_vec_dot_f16 as ggml's AVX-512 build computes it (ggml-cpu.c): the first
// n & ~63 elements in 4 x 16 lanes by fused multiply-adds (element i into
// accumulator (i / 16) % 4, lane i % 16), the accumulators added 0+2, 1+3,
// then 0+1, the 16 lanes as a tree (_mm512_reduce_add_ps: l+8, l+4, l+2,
// l+1); the rest added one by one in double. Products of f16 values are
// exact in f32.
template <bool Fma>
LLAMA_ALWAYS_INLINE float generic_dot(const float* a, const float* b, int64_t n) {
  const int64_t np = n & ~int64_t{kSlots - 1};
  double sum = 0.0;
  if (np > 0) {
    float acc[kSlots] = {};
    for (int64_t i = 0; i < np; i += kSlots) {
      for (int64_t l = 0; l < kSlots; ++l) acc[l] = fused_madd<Fma>(a[i + l], b[i + l], acc[l]);
    }
    for (int64_t l = 0; l < kLanes; ++l) {
      acc[l] += acc[2 * kLanes + l];
      acc[kLanes + l] += acc[3 * kLanes + l];
    }
    for (int64_t l = 0; l < kLanes; ++l) acc[l] += acc[kLanes + l];
    for (int64_t w = kLanes / 2; w > 0; w /= 2) {
      for (int64_t l = 0; l < w; ++l) acc[l] += acc[l + w];
    }
    sum = static_cast<double>(acc[0]);
  }
  for (int64_t i = np; i < n; ++i) sum += static_cast<double>(a[i] * b[i]);
  return static_cast<float>(sum);
}

// ggml_v_expf (ggml-cpu.c, the AVX-512 softmax's exp): a Cody-Waite
// reduction and a degree-5 polynomial, every step an f32 operation, so the
// same bits on every level (std::fma is exact everywhere).
inline float ggml_expf(float x) {
  const float r = 0x1.8p23f;
  const float z = std::fma(x, 0x1.715476p+0f, r);
  const float n = z - r;
  const float b = std::fma(-n, 0x1.7f7d1cp-20f, std::fma(-n, 0x1.62e4p-1f, x));
  const float u = b * b;
  const float j = std::fma(std::fma(std::fma(0x1.0e4020p-7f, b, 0x1.573e2ep-5f), u,
                                    std::fma(0x1.555e66p-3f, b, 0x1.fffdb6p-2f)),
                           u, std::fma(0x1.ffffecp-1f, b, 1.0f));
  if (std::fabs(n) > 192) return n <= 0 ? 0.0f : INFINITY;
  return std::ldexp(j, static_cast<int>(n));
}

// One 16-lane chunk of ggml_vec_soft_max_f32: e[l] = exp(s[l] - max) for the
// `valid` first lanes, 0 for the masked rest; returns the lanes' sum as
// _mm512_reduce_add_ps adds them (a tree: l + 8, l + 4, l + 2, l + 1).
LLAMA_ALWAYS_INLINE float generic_exp_chunk(float* s, float max, int64_t valid) {
  float e[kLanes];
  for (int64_t l = 0; l < kLanes; ++l) {
    e[l] = l < valid ? ggml_expf(s[l] - max) : 0.0f;
    s[l] = e[l];
  }
  for (int64_t w = kLanes / 2; w > 0; w /= 2) {
    for (int64_t l = 0; l < w; ++l) e[l] += e[l + w];
  }
  return e[0];
}

// Row operations of the value sums, one element at a time.
template <bool Fma>
LLAMA_ALWAYS_INLINE void generic_axpy(float p, const float* x, float* a, int64_t n) {
  for (int64_t i = 0; i < n; ++i) a[i] = fused_madd<Fma>(p, x[i], a[i]);
}
LLAMA_ALWAYS_INLINE void generic_scale(float p, const float* x, float* a, int64_t n) {
  for (int64_t i = 0; i < n; ++i) a[i] = p * x[i];
}
LLAMA_ALWAYS_INLINE void generic_add(float* a, const float* b, int64_t n) {
  for (int64_t i = 0; i < n; ++i) a[i] += b[i];
}

// One struct per level: f16_rows.hpp's row conversions and the attention's
// operations. Not always_inline: each carries its level's target and is
// inlined into that level's body only.
struct PortableCvt : detail::F16RowsPortable {
  static float dot(const float* a, const float* b, int64_t n) {
    return generic_dot<false>(a, b, n);
  }
  static float exp_chunk(float* s, float max, int64_t valid) {
    return generic_exp_chunk(s, max, valid);
  }
  static void axpy(float p, const float* x, float* a, int64_t n) {
    generic_axpy<false>(p, x, a, n);
  }
  static void scale(float p, const float* x, float* a, int64_t n) { generic_scale(p, x, a, n); }
  static void add(float* a, const float* b, int64_t n) { generic_add(a, b, n); }
};

#if LLAMA_HAVE_X86_TARGETS
using detail::simd::kFull16;
using detail::simd::kFull8;
using detail::simd::tail_mask;

struct Avx2Cvt : detail::F16RowsAvx2 {
  LLAMA_TARGET_AVX2 static float dot(const float* a, const float* b, int64_t n) {
    return generic_dot<true>(a, b, n);
  }
  LLAMA_TARGET_AVX2 static float exp_chunk(float* s, float max, int64_t valid) {
    return generic_exp_chunk(s, max, valid);
  }
  LLAMA_TARGET_AVX2 static void axpy(float p, const float* x, float* a, int64_t n) {
    generic_axpy<true>(p, x, a, n);
  }
  LLAMA_TARGET_AVX2 static void scale(float p, const float* x, float* a, int64_t n) {
    generic_scale(p, x, a, n);
  }
  LLAMA_TARGET_AVX2 static void add(float* a, const float* b, int64_t n) { generic_add(a, b, n); }
};

struct Avx512Cvt : detail::F16RowsAvx512 {
  // generic_dot with the lanes in registers: the same operations in the same order.
  LLAMA_TARGET_AVX512 static float dot(const float* a, const float* b, int64_t n) {
    const int64_t np = n & ~int64_t{kSlots - 1};
    double sum = 0.0;
    if (np > 0) {
      __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
      for (int64_t i = 0; i < np; i += kSlots) {
        s0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), s0);
        s1 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 16), _mm512_loadu_ps(b + i + 16), s1);
        s2 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 32), _mm512_loadu_ps(b + i + 32), s2);
        s3 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 48), _mm512_loadu_ps(b + i + 48), s3);
      }
      s0 = _mm512_add_ps(_mm512_add_ps(s0, s2), _mm512_add_ps(s1, s3));
      sum = static_cast<double>(reduce_tree(s0));
    }
    for (int64_t i = np; i < n; ++i) sum += static_cast<double>(a[i] * b[i]);
    return static_cast<float>(sum);
  }
  // _mm512_reduce_add_ps's order written out (l + 8, l + 4, l + 2, l + 1).
  LLAMA_TARGET_AVX512 static float reduce_tree(__m512 v) {
    const __m256 h = _mm256_add_ps(_mm512_maskz_extractf32x8_ps(kFull8, v, 0),
                                   _mm512_maskz_extractf32x8_ps(kFull8, v, 1));
    const __m128 q = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
    const __m128 d = _mm_add_ps(q, _mm_movehl_ps(q, q));
    return _mm_cvtss_f32(_mm_add_ss(d, _mm_movehdup_ps(d)));
  }
  // generic_exp_chunk as ggml_v_expf computes it.
  LLAMA_TARGET_AVX512 static float exp_chunk(float* s, float max, int64_t valid) {
    const __mmask16 live = static_cast<__mmask16>((1u << valid) - 1u);
    const __m512 x = _mm512_sub_ps(_mm512_maskz_loadu_ps(live, s), _mm512_set1_ps(max));
    const __m512 r = _mm512_set1_ps(0x1.8p23f);
    const __m512 z = _mm512_fmadd_ps(x, _mm512_set1_ps(0x1.715476p+0f), r);
    const __m512 n = _mm512_sub_ps(z, r);
    const __m512 b = _mm512_fnmadd_ps(n, _mm512_set1_ps(0x1.7f7d1cp-20f),
                                      _mm512_fnmadd_ps(n, _mm512_set1_ps(0x1.62e4p-1f), x));
    const __mmask16 d = _mm512_cmp_ps_mask(_mm512_abs_ps(n), _mm512_set1_ps(192), _CMP_GT_OQ);
    const __m512 u = _mm512_mul_ps(b, b);
    const __m512 j = _mm512_fmadd_ps(
        _mm512_fmadd_ps(
            _mm512_fmadd_ps(_mm512_set1_ps(0x1.0e4020p-7f), b, _mm512_set1_ps(0x1.573e2ep-5f)), u,
            _mm512_fmadd_ps(_mm512_set1_ps(0x1.555e66p-3f), b, _mm512_set1_ps(0x1.fffdb6p-2f))),
        u, _mm512_fmadd_ps(_mm512_set1_ps(0x1.ffffecp-1f), b, _mm512_set1_ps(1.0f)));
    __m512 e = _mm512_maskz_scalef_ps(kFull16, j, n);
    if (d != 0) {
      const __m512 alt =
          _mm512_mask_blend_ps(_mm512_cmp_ps_mask(n, _mm512_setzero_ps(), _CMP_LE_OQ),
                               _mm512_set1_ps(INFINITY), _mm512_setzero_ps());
      e = _mm512_mask_blend_ps(d, e, alt);
    }
    e = _mm512_maskz_mov_ps(live, e);
    _mm512_storeu_ps(s, e);
    return reduce_tree(e);
  }
  // The generic row operations, 16 elements a step, the tail masked.
  LLAMA_TARGET_AVX512 static void axpy(float p, const float* x, float* a, int64_t n) {
    const __m512 vp = _mm512_set1_ps(p);
    for (int64_t i = 0; i < n; i += kLanes) {
      const __mmask16 k = tail_mask(n - i);
      _mm512_mask_storeu_ps(
          a + i, k,
          _mm512_fmadd_ps(vp, _mm512_maskz_loadu_ps(k, x + i), _mm512_maskz_loadu_ps(k, a + i)));
    }
  }
  LLAMA_TARGET_AVX512 static void scale(float p, const float* x, float* a, int64_t n) {
    const __m512 vp = _mm512_set1_ps(p);
    for (int64_t i = 0; i < n; i += kLanes) {
      const __mmask16 k = tail_mask(n - i);
      _mm512_mask_storeu_ps(a + i, k, _mm512_mul_ps(vp, _mm512_maskz_loadu_ps(k, x + i)));
    }
  }
  LLAMA_TARGET_AVX512 static void add(float* a, const float* b, int64_t n) {
    for (int64_t i = 0; i < n; i += kLanes) {
      const __mmask16 k = tail_mask(n - i);
      _mm512_mask_storeu_ps(
          a + i, k,
          _mm512_add_ps(_mm512_maskz_loadu_ps(k, a + i), _mm512_maskz_loadu_ps(k, b + i)));
    }
  }
};
#endif

// Rounds n floats to f16 and back, in place, 64 at a time.
template <class Cvt>
LLAMA_ALWAYS_INLINE void through_f16(float* v, int64_t n) {
  uint16_t bits[64];
  for (int64_t i = 0; i < n; i += 64) {
    const int64_t k = std::min<int64_t>(64, n - i);
    Cvt::narrow(v + i, bits, k);
    Cvt::widen(bits, v + i, k);
  }
}

// llama.cpp's decode attends n_kv = n_pos rounded up to 32 cache cells, the
// ones past the query masked (probability 0).
constexpr int64_t padded(int64_t n_pos) { return (n_pos + 31) / 32 * 32; }

// m <= kAttendF16Queries queries of one head (attend_queries_f16's layout).
// scratch: f32 [m, hs] rounded queries, f32 [hs] one widened row, f32 [m,
// padded(n_keys)] scores then probabilities, f32 [m, 64, hs] the value sums'
// lanes (block_scratch_floats).
template <bool Fma, class Cvt>
LLAMA_ALWAYS_INLINE void block_body(const float* q, int64_t q_ld, int64_t m, int64_t first_pos,
                                    int64_t hs, const uint16_t* keys, const uint16_t* values,
                                    int64_t stride, float* scratch, float* out, int64_t out_ld) {
  const int64_t n_keys = first_pos + m, n_pad = padded(n_keys);
  float* qh = scratch;            // f32 [m, hs]
  float* row = qh + m * hs;       // f32 [hs]
  float* sc = row + hs;           // f32 [m, n_pad]
  float* lanes = sc + m * n_pad;  // f32 [m, kSlots, hs]
  for (int64_t j = 0; j < m; ++j) {
    std::copy_n(q + j * q_ld, hs, qh + j * hs);
    through_f16<Cvt>(qh + j * hs, hs);
  }
  const float scale = 1.0f / std::sqrt(static_cast<float>(hs));
  const auto prefetch = [&](const uint16_t* rows, int64_t t) {
    if (t >= n_keys) return;
    for (int64_t i = 0; i < hs; i += 32) __builtin_prefetch(rows + t * stride + i);
  };
  // 1. Scores: query j sees positions t <= first_pos + j.
  for (int64_t t = 0; t < n_keys; ++t) {
    prefetch(keys, t + kAhead);
    Cvt::widen(keys + t * stride, row, hs);
    for (int64_t j = std::max<int64_t>(0, t - first_pos); j < m; ++j) {
      sc[j * n_pad + t] = Cvt::dot(qh + j * hs, row, hs) * scale;
    }
  }
  // 2. Softmax over the padded cells (ggml_vec_soft_max_f32): exp in 16-lane
  // chunks, each chunk's lanes added as a tree into a double sum.
  for (int64_t j = 0; j < m; ++j) {
    float* s = sc + j * n_pad;
    const int64_t n_pos = first_pos + j + 1, n_kv = padded(n_pos);
    float max = s[0];
    for (int64_t t = 1; t < n_pos; ++t) max = std::max(max, s[t]);
    double sum = 0.0;
    for (int64_t t0 = 0; t0 < n_kv; t0 += kLanes) {
      const int64_t valid = std::clamp<int64_t>(n_pos - t0, 0, kLanes);
      sum += static_cast<double>(Cvt::exp_chunk(s + t0, max, valid));
    }
    const auto inv = static_cast<float>(1.0 / sum);
    for (int64_t t = 0; t < n_pos; ++t) s[t] *= inv;
    through_f16<Cvt>(s, n_pos);
  }
  // 3. Values: out_i = ggml_dot over the padded cells of (v_.i, p): the
  // lanes kept per output element (f32 [64, hs] per query, slot t % 64) for
  // t < np, then (sumf, f64 [m, hs]) the lanes' sum plus each later product
  // in double, in position order.
  double sumf[kAttendF16Queries * kMaxHead];
  bool reduced[kAttendF16Queries] = {};
  const auto np_of = [&](int64_t j) { return padded(first_pos + j + 1) & ~int64_t{kSlots - 1}; };
  const auto reduce = [&](int64_t j) {
    double* d = sumf + j * hs;
    reduced[j] = true;
    if (np_of(j) == 0) {
      for (int64_t i = 0; i < hs; ++i) d[i] = 0.0;
      return;
    }
    float* a = lanes + j * kSlots * hs;
    const auto slot = [&](int64_t k) { return a + k * hs; };
    for (int64_t l = 0; l < kLanes; ++l) {
      Cvt::add(slot(l), slot(2 * kLanes + l), hs);
      Cvt::add(slot(kLanes + l), slot(3 * kLanes + l), hs);
    }
    for (int64_t l = 0; l < kLanes; ++l) Cvt::add(slot(l), slot(kLanes + l), hs);
    for (int64_t w = kLanes / 2; w > 0; w /= 2) {
      for (int64_t l = 0; l < w; ++l) Cvt::add(slot(l), slot(l + w), hs);
    }
    for (int64_t i = 0; i < hs; ++i) d[i] = static_cast<double>(slot(0)[i]);
  };
  // np may pass n_pos (33 positions: 64 cells): the masked cells' products
  // are zeros, so their first-pass slots start at zero.
  for (int64_t j = 0; j < m; ++j) {
    for (int64_t t = first_pos + j + 1; t < std::min(np_of(j), kSlots); ++t) {
      std::fill_n(lanes + (j * kSlots + t) * hs, hs, 0.0f);
    }
  }
  for (int64_t t = 0; t < std::min(n_keys, kAhead); ++t) prefetch(values, t);
  for (int64_t t = 0; t < n_keys; ++t) {
    prefetch(values, t + kAhead);
    Cvt::widen(values + t * stride, row, hs);
    for (int64_t j = std::max<int64_t>(0, t - first_pos); j < m; ++j) {
      const float p = sc[j * n_pad + t];
      if (t < np_of(j)) {
        float* a = lanes + (j * kSlots + t % kSlots) * hs;
        if (t < kSlots) {
          Cvt::scale(p, row, a, hs);
        } else {
          Cvt::axpy(p, row, a, hs);
        }
        continue;
      }
      if (!reduced[j]) reduce(j);
      double* d = sumf + j * hs;
      for (int64_t i = 0; i < hs; ++i) d[i] += static_cast<double>(p * row[i]);
    }
  }
  for (int64_t j = 0; j < m; ++j) {
    if (!reduced[j]) reduce(j);
    float* o = out + j * out_ld;
    for (int64_t i = 0; i < hs; ++i) o[i] = static_cast<float>(sumf[j * hs + i]);
  }
}

#define LLAMA_F16_BLOCK_PARAMS                                                                   \
  (const float* q, int64_t q_ld, int64_t m, int64_t first_pos, int64_t hs, const uint16_t* keys, \
   const uint16_t* values, int64_t stride, float* scratch, float* out, int64_t out_ld)
#define LLAMA_F16_BLOCK_ARGS (q, q_ld, m, first_pos, hs, keys, values, stride, scratch, out, out_ld)

void block_portable LLAMA_F16_BLOCK_PARAMS { block_body<false, PortableCvt> LLAMA_F16_BLOCK_ARGS; }
#if LLAMA_HAVE_X86_TARGETS
LLAMA_TARGET_AVX2 void block_avx2 LLAMA_F16_BLOCK_PARAMS {
  block_body<true, Avx2Cvt> LLAMA_F16_BLOCK_ARGS;
}
LLAMA_TARGET_AVX512 void block_avx512 LLAMA_F16_BLOCK_PARAMS {
  block_body<true, Avx512Cvt> LLAMA_F16_BLOCK_ARGS;
}
#else
void block_avx2 LLAMA_F16_BLOCK_PARAMS { block_portable LLAMA_F16_BLOCK_ARGS; }
void block_avx512 LLAMA_F16_BLOCK_PARAMS { block_portable LLAMA_F16_BLOCK_ARGS; }
#endif

// Floats of one block's scratch (block_body's layout).
size_t block_scratch_floats(int64_t hs, int64_t n_keys, int64_t m) {
  return static_cast<size_t>(m * hs + hs + m * padded(n_keys) + m * kSlots * hs);
}

}  // namespace

size_t attend_f16_scratch_floats(int64_t head_size, int64_t n_keys, int64_t n_queries) {
  return block_scratch_floats(head_size, n_keys,
                              std::clamp<int64_t>(n_queries, 1, kAttendF16Queries));
}

void attend_queries_f16_at_level(SimdLevel level, const float* q, int64_t q_ld, int64_t n,
                                 int64_t first_pos, int64_t head_size, const uint16_t* keys,
                                 const uint16_t* values, int64_t stride, std::span<float> scratch,
                                 float* out, int64_t out_ld) {
  if (head_size < 1 || head_size > kMaxHead) {
    throw Error("attention over an f16 KV cache: head size " + std::to_string(head_size) +
                " outside 1.." + std::to_string(kMaxHead));
  }
  const SimdLevel at = runnable_level(level);
  for (int64_t i0 = 0; i0 < n; i0 += kAttendF16Queries) {
    const int64_t m = std::min(kAttendF16Queries, n - i0);
    const int64_t fp = first_pos + i0;
    const float* qb = q + i0 * q_ld;
    float* ob = out + i0 * out_ld;
    // Each block needs less than the whole call's scratch (fewer keys).
    float* s = scratch.data();
    switch (at) {
      case SimdLevel::avx512:
        block_avx512(qb, q_ld, m, fp, head_size, keys, values, stride, s, ob, out_ld);
        break;
      case SimdLevel::avx2:
        block_avx2(qb, q_ld, m, fp, head_size, keys, values, stride, s, ob, out_ld);
        break;
      case SimdLevel::portable:
        block_portable(qb, q_ld, m, fp, head_size, keys, values, stride, s, ob, out_ld);
        break;
    }
  }
}

void attend_queries_f16(const float* q, int64_t q_ld, int64_t n, int64_t first_pos,
                        int64_t head_size, const uint16_t* keys, const uint16_t* values,
                        int64_t stride, std::span<float> scratch, float* out, int64_t out_ld) {
  attend_queries_f16_at_level(simd_level(), q, q_ld, n, first_pos, head_size, keys, values, stride,
                              scratch, out, out_ld);
}

void attend_head_f16(std::span<const float> q, const uint16_t* keys, const uint16_t* values,
                     int64_t stride, int64_t n_pos, std::span<float> scratch,
                     std::span<float> out) {
  const auto hs = static_cast<int64_t>(q.size());
  attend_queries_f16(q.data(), hs, 1, n_pos - 1, hs, keys, values, stride, scratch, out.data(), hs);
}

}  // namespace llama
