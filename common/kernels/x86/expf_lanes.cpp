// glibc's expf in AVX-512 lanes (see x86/expf_lanes.hpp): the operations of its
// FMA build (libm's __expf_fma in glibc 2.28..2.36, read from the
// disassembly: kd and r come from fused multiply-adds of x * 32/ln2), in
// double, 8 lanes per step. Inputs whose exponent field is 0x42b or more
// (|x| >= 88, infinities, NaN) take glibc's special cases, so those lanes
// call std::exp.
#include "kernels/x86/expf_lanes.hpp"

#include <bit>
#include <cmath>
#include <cstring>

#include "llama/kernels/dispatch/cpu_features.hpp"
#include "llama/kernels/steps/runq_c.hpp"
#include "llama/kernels/x86/simd_target.hpp"

#if LLAMA_HAVE_X86_TARGETS
#include <immintrin.h>
#endif

namespace llama::q8::detail {
namespace {

#if LLAMA_HAVE_X86_TARGETS
// __exp2f_data (EXP2F_TABLE_BITS = 5): tab[i] = bits of 2^(i/32) minus i << 47.
constexpr uint64_t kTable[32] = {
    0x3ff0000000000000, 0x3fefd9b0d3158574, 0x3fefb5586cf9890f, 0x3fef9301d0125b51,
    0x3fef72b83c7d517b, 0x3fef54873168b9aa, 0x3fef387a6e756238, 0x3fef1e9df51fdee1,
    0x3fef06fe0a31b715, 0x3feef1a7373aa9cb, 0x3feedea64c123422, 0x3feece086061892d,
    0x3feebfdad5362a27, 0x3feeb42b569d4f82, 0x3feeab07dd485429, 0x3feea47eb03a5585,
    0x3feea09e667f3bcd, 0x3fee9f75e8ec5f74, 0x3feea11473eb0187, 0x3feea589994cce13,
    0x3feeace5422aa0db, 0x3feeb737b0cdc5e5, 0x3feec49182a3f090, 0x3feed503b23e255d,
    0x3feee89f995ad3ad, 0x3feeff76f2fb5e47, 0x3fef199bdd85529c, 0x3fef3720dcef9069,
    0x3fef5818dcfba487, 0x3fef7c97337b9b5f, 0x3fefa4afa2a490da, 0x3fefd0765b6e4540,
};
constexpr double kInvLn2N = 0x1.71547652b82fep+5;  // 32 / ln 2
constexpr double kShift = 0x1.8p+52;               // rounds to an integer
// poly_scaled: 2^(r/32) ~= C0 r^3 + C1 r^2 + C2 r + 1.
constexpr double kC0 = 0x1.c6af84b912394p-20, kC1 = 0x1.ebfce50fac4f3p-13,
                 kC2 = 0x1.62e42ff0c52d6p-6;
// glibc's `abstop >= top12(88.0f)`: exponent field and top mantissa bits.
constexpr int32_t kSpecialTop = 0x42a;

// expf of 8 floats, glibc's main path (valid where the top bits say so).
LLAMA_TARGET_AVX512 inline __m256 expf8(__m256 x) {
  const __m512d xd = _mm512_maskz_cvtps_pd(0xff, x);
  const __m512d inv = _mm512_set1_pd(kInvLn2N), shift = _mm512_set1_pd(kShift);
  const __m512d kds = _mm512_fmadd_pd(inv, xd, shift);  // k + shift: k in the low bits
  const __m512i ki = _mm512_castpd_si512(kds);
  const __m512d kd = _mm512_sub_pd(kds, shift);
  const __m512d r = _mm512_fmsub_pd(inv, xd, kd);  // x * 32/ln2 - k, fused
  // tab[k % 32]: two 16-entry permutes, bit 4 of k picks between them.
  const __m512i t0 = _mm512_loadu_si512(kTable), t1 = _mm512_loadu_si512(kTable + 8);
  const __m512i t2 = _mm512_loadu_si512(kTable + 16), t3 = _mm512_loadu_si512(kTable + 24);
  const __m512i lo = _mm512_permutex2var_epi64(t0, ki, t1);
  const __m512i hi = _mm512_permutex2var_epi64(t2, ki, t3);
  const __mmask8 upper = _mm512_test_epi64_mask(ki, _mm512_set1_epi64(16));
  const __m512i tab = _mm512_mask_blend_epi64(upper, lo, hi);
  const __m512d s =
      _mm512_castsi512_pd(_mm512_add_epi64(tab, _mm512_maskz_slli_epi64(0xff, ki, 47)));
  const __m512d z = _mm512_fmadd_pd(r, _mm512_set1_pd(kC0), _mm512_set1_pd(kC1));
  const __m512d r2 = _mm512_mul_pd(r, r);
  __m512d y = _mm512_fmadd_pd(r, _mm512_set1_pd(kC2), _mm512_set1_pd(1.0));
  y = _mm512_fmadd_pd(z, r2, y);
  return _mm512_maskz_cvtpd_ps(0xff, _mm512_mul_pd(y, s));
}

// x[i] = std::exp(x[i] - shift[i]) for the lanes of `m` (at most 16 from
// x); returns the exps (0 in the other lanes).
LLAMA_TARGET_AVX512 inline __m512 expf16(float* x, __mmask16 m, __m512 shift) {
  const __m512 v = _mm512_maskz_sub_ps(m, _mm512_maskz_loadu_ps(m, x), shift);
  const __m256 e0 = expf8(_mm512_maskz_extractf32x8_ps(0xff, v, 0));
  const __m256 e1 = expf8(_mm512_maskz_extractf32x8_ps(0xff, v, 1));
  __m512 e = _mm512_maskz_insertf32x8(m, _mm512_castps256_ps512(e0), e1, 1);
  const __m512i top = _mm512_and_si512(_mm512_maskz_srli_epi32(0xffff, _mm512_castps_si512(v), 20),
                                       _mm512_set1_epi32(0x7ff));
  const __mmask16 special = _mm512_mask_cmpgt_epi32_mask(m, top, _mm512_set1_epi32(kSpecialTop));
  if (special != 0) {
    alignas(64) float in[16], out[16];
    _mm512_store_ps(in, v);
    _mm512_store_ps(out, e);
    for (int i = 0; i < 16; ++i) {
      if ((special >> i) & 1) out[i] = std::exp(in[i]);
    }
    e = _mm512_maskz_load_ps(m, out);
  }
  _mm512_mask_storeu_ps(x, m, e);
  return e;
}

LLAMA_TARGET_AVX512 void expf_shifted(float* x, int64_t n, float shift) {
  const __m512 s = _mm512_set1_ps(shift);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) expf16(x + i, 0xffff, s);
  if (i < n) expf16(x + i, static_cast<__mmask16>((1u << (n - i)) - 1), s);
}

LLAMA_TARGET_AVX512 void expf_lanes(float* st, int64_t n_keys, const int64_t* n_pos,
                                    const float* max_val, float* sum) {
  const __m512 shift = _mm512_loadu_ps(max_val);
  const __m512i lo = _mm512_loadu_si512(n_pos), hi = _mm512_loadu_si512(n_pos + 8);
  __m512 acc = _mm512_loadu_ps(sum);
  for (int64_t t = 0; t < n_keys; ++t) {
    const __m512i tv = _mm512_set1_epi64(t);
    const auto m = static_cast<__mmask16>(_mm512_cmpgt_epi64_mask(lo, tv) |
                                          (_mm512_cmpgt_epi64_mask(hi, tv) << 8));
    acc = _mm512_mask_add_ps(acc, m, acc, expf16(st + t * 16, m, shift));
  }
  _mm512_storeu_ps(sum, acc);
}

LLAMA_TARGET_AVX512 void swiglu_lanes(float* out, const float* gate, const float* up, int64_t n) {
  const __m512 zero = _mm512_setzero_ps(), one = _mm512_set1_ps(1.0f);
  const __m512 sign = _mm512_set1_ps(-0.0f);
  for (int64_t i = 0; i < n; i += 16) {
    const auto m = n - i >= 16 ? __mmask16{0xffff} : static_cast<__mmask16>((1u << (n - i)) - 1);
    const __m512 g = _mm512_maskz_loadu_ps(m, gate + i);
    alignas(64) float e[16];
    _mm512_store_ps(e, _mm512_xor_ps(g, sign));  // -gate, as the scalar negation
    const __m512 ex = expf16(e, m, zero);        // std::exp(-gate - 0) = std::exp(-gate)
    const __m512 silu = _mm512_mul_ps(g, _mm512_div_ps(one, _mm512_add_ps(one, ex)));
    _mm512_mask_storeu_ps(out + i, m, _mm512_mul_ps(silu, _mm512_maskz_loadu_ps(m, up + i)));
  }
}

// Every 65537th float bit pattern from 0 to -104 and from 0 to 89 (each
// exponent, varied mantissas), and the edges of glibc's special cases.
bool check_against_libm() {
  if (!simd_level_supported(SimdLevel::avx512)) return false;
  float sample[16];
  int n = 0;
  bool same = true;
  const auto flush = [&] {
    float got[16];
    std::memcpy(got, sample, sizeof(float) * size_t(n));
    expf_shifted(got, n, 0.0f);
    for (int i = 0; i < n; ++i) {
      const float want = std::exp(sample[i]);
      same = same && std::bit_cast<uint32_t>(got[i]) == std::bit_cast<uint32_t>(want);
    }
    n = 0;
  };
  const auto add = [&](float v) {
    sample[n++] = v;
    if (n == 16) flush();
  };
  for (uint32_t u = 0; u <= 0x42d00000u; u += 65537u) {
    add(std::bit_cast<float>(u | 0x80000000u));
    if (u <= 0x42b20000u) add(std::bit_cast<float>(u));
  }
  for (const float v : {-0x1.9fe368p6f, -104.0f, -0x1.9d1d9ep6f, -88.0f, -87.99f, 0x1.62e42ep6f,
                        89.0f, INFINITY, -INFINITY, NAN, -0.0f})
    add(v);
  if (n > 0) flush();
  return same;
}
#endif

}  // namespace

bool vector_expf_matches_libm() {
#if LLAMA_HAVE_X86_TARGETS
  static const bool same = check_against_libm();
  return same;
#else
  return false;
#endif
}

void expf_lanes_avx512(float* st, int64_t n_keys, const int64_t* n_pos, const float* max_val,
                       float* sum) {
#if LLAMA_HAVE_X86_TARGETS
  expf_lanes(st, n_keys, n_pos, max_val, sum);
#else
  for (int64_t t = 0; t < n_keys; ++t) {
    for (int64_t l = 0; l < 16; ++l) {
      if (t >= n_pos[l]) continue;
      st[t * 16 + l] = std::exp(st[t * 16 + l] - max_val[l]);
      sum[l] += st[t * 16 + l];
    }
  }
#endif
}

void expf_shifted_avx512(float* x, int64_t n, float shift) {
#if LLAMA_HAVE_X86_TARGETS
  expf_shifted(x, n, shift);
#else
  for (int64_t i = 0; i < n; ++i) x[i] = std::exp(x[i] - shift);
#endif
}

void swiglu_avx512(float* out, const float* gate, const float* up, int64_t n) {
#if LLAMA_HAVE_X86_TARGETS
  swiglu_lanes(out, gate, up, n);
#else
  for (int64_t i = 0; i < n; ++i) {
    float v = gate[i];
    v *= 1.0f / (1.0f + std::exp(-v));
    out[i] = v * up[i];
  }
#endif
}

}  // namespace llama::q8::detail

namespace llama::q8 {

void softmax_exp_at_level(SimdLevel level, std::span<float> x, float shift) {
  if (runnable_level(level) == SimdLevel::avx512 && detail::vector_expf_matches_libm()) {
    detail::expf_shifted_avx512(x.data(), static_cast<int64_t>(x.size()), shift);
    return;
  }
  for (float& v : x) v = std::exp(v - shift);
}

bool softmax_exp_vectorized() { return detail::vector_expf_matches_libm(); }

}  // namespace llama::q8
