// The AVX-512 VNNI Q8_0 kernel. vpdpbusd multiplies unsigned by signed bytes,
// so each product is |w| (as unsigned: -128 becomes 128) times x with w's sign;
// x comes from quantize_activations, |x| <= 127, so negating it cannot
// overflow. Groups whose size is a multiple of 64 are summed 16 at a time and
// reduced together (a transpose of adds) instead of one horizontal sum per
// group; the f32 part stays runq.c's sequential FMA chain per row, so results
// equal the portable kernel's bit for bit.
#include <immintrin.h>

#include <cmath>

#include "q8_kernels.hpp"

#define LLAMA_VNNI __attribute__((target("avx512f,avx512bw,avx512vnni")))

namespace llama::detail {
namespace {

// Horizontal sum (written out: GCC 12's _mm512_reduce_add_epi32 warns).
LLAMA_VNNI int32_t reduce_add(__m512i v) {
  const __m256i lo = _mm512_mask_extracti64x4_epi64(_mm256_setzero_si256(), 0xff, v, 0);
  const __m256i hi = _mm512_mask_extracti64x4_epi64(_mm256_setzero_si256(), 0xff, v, 1);
  const __m256i s8 = _mm256_add_epi32(lo, hi);
  __m128i s4 = _mm_add_epi32(_mm256_castsi256_si128(s8), _mm256_extracti128_si256(s8, 1));
  s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0x4e));
  s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0xb1));
  return _mm_cvtsi128_si32(s4);
}

// acc += w[0..64) . x[0..64) (masked to `m`), in 16 int32 lanes.
LLAMA_VNNI __m512i dot64(__m512i acc, const int8_t* w, const int8_t* x, __mmask64 m) {
  const __m512i wv = _mm512_maskz_loadu_epi8(m, w);
  const __m512i xv = _mm512_maskz_loadu_epi8(m, x);
  const __m512i xs = _mm512_mask_sub_epi8(xv, _mm512_movepi8_mask(wv), _mm512_setzero_si512(), xv);
  return _mm512_dpbusd_epi32(acc, _mm512_abs_epi8(wv), xs);
}

LLAMA_VNNI int32_t dot_group(const int8_t* w, const int8_t* x, int64_t n) {
  __m512i acc = _mm512_setzero_si512();
  for (int64_t k = 0; k < n; k += 64) {
    const int64_t left = n - k;
    acc = dot64(acc, w + k, x + k, left >= 64 ? ~__mmask64{0} : (__mmask64{1} << left) - 1);
  }
  return reduce_add(acc);
}

// Full masks: the maskz intrinsics avoid GCC 12's spurious "may be used
// uninitialized" on the unmasked ones' undefined pass-through operand.
constexpr __mmask16 kAll16 = 0xffff;
constexpr __mmask8 kAll8 = 0xff;

// Lane g of the result is the sum of the 16 lanes of v[g].
LLAMA_VNNI __m512i reduce16(const __m512i v[16]) {
  __m512i s2[8], s4[4];
  for (int i = 0; i < 8; ++i) {
    s2[i] = _mm512_add_epi32(_mm512_maskz_unpacklo_epi32(kAll16, v[2 * i], v[2 * i + 1]),
                             _mm512_maskz_unpackhi_epi32(kAll16, v[2 * i], v[2 * i + 1]));
  }
  // Each 128-bit lane of s4[i] holds partial sums of v[4i .. 4i+3] in order.
  for (int i = 0; i < 4; ++i) {
    s4[i] = _mm512_add_epi32(_mm512_maskz_unpacklo_epi64(kAll8, s2[2 * i], s2[2 * i + 1]),
                             _mm512_maskz_unpackhi_epi64(kAll8, s2[2 * i], s2[2 * i + 1]));
  }
  const __m512i t0 = _mm512_add_epi32(_mm512_maskz_shuffle_i32x4(kAll16, s4[0], s4[1], 0x88),
                                      _mm512_maskz_shuffle_i32x4(kAll16, s4[0], s4[1], 0xdd));
  const __m512i t1 = _mm512_add_epi32(_mm512_maskz_shuffle_i32x4(kAll16, s4[2], s4[3], 0x88),
                                      _mm512_maskz_shuffle_i32x4(kAll16, s4[2], s4[3], 0xdd));
  return _mm512_add_epi32(_mm512_maskz_shuffle_i32x4(kAll16, t0, t1, 0x88),
                          _mm512_maskz_shuffle_i32x4(kAll16, t0, t1, 0xdd));
}

// One row against one vector (Q8Vector or Q8View); see q8.cpp's row_dot_portable.
template <typename Vec>
LLAMA_VNNI inline float row_dot(const int8_t* wr, const float* ws, const Vec& x) {
  const auto cols = static_cast<int64_t>(x.values.size());
  const int64_t gs = x.group_size, groups = cols / gs;
  const int8_t* xv = x.values.data();
  const float* xs = x.scales.data();
  // Groups of whole 64-byte vectors go 16 at a time; the rest one by one.
  const int64_t blocked = gs % 64 == 0 ? groups - groups % 16 : 0;
  alignas(64) float scaled[16];
  float val = 0.0f;
  for (int64_t g0 = 0; g0 < blocked; g0 += 16) {
    __m512i acc[16];
    for (int j = 0; j < 16; ++j) {
      acc[j] = _mm512_setzero_si512();
      const int64_t at = (g0 + j) * gs;
      for (int64_t k = 0; k < gs; k += 64) {
        acc[j] = dot64(acc[j], wr + at + k, xv + at + k, ~__mmask64{0});
      }
    }
    // float(ival) * w_scale for 16 groups at once, then runq.c's FMA chain.
    _mm512_store_ps(scaled, _mm512_mul_ps(_mm512_maskz_cvtepi32_ps(kAll16, reduce16(acc)),
                                          _mm512_loadu_ps(ws + g0)));
    for (int j = 0; j < 16; ++j) val = std::fma(scaled[j], xs[g0 + j], val);
  }
  for (int64_t g = blocked; g < groups; ++g) {
    const int32_t ival = dot_group(wr + g * gs, xv + g * gs, gs);
    val = std::fma(static_cast<float>(ival) * ws[g], xs[g], val);
  }
  return val;
}

}  // namespace

LLAMA_VNNI void q8_matvec_rows_vnni(std::span<float> out, const QuantizedTensor& w, const Q8View& x,
                                    int64_t row_begin, int64_t row_end) {
  const auto cols = static_cast<int64_t>(x.values.size());
  const int64_t groups = cols / x.group_size;
  for (int64_t r = row_begin; r < row_end; ++r) {
    out[static_cast<size_t>(r - row_begin)] =
        row_dot(w.values.data() + r * cols, w.scales.data() + r * groups, x);
  }
}

LLAMA_VNNI void q8_matmat_rows_vnni(std::span<float> out, int64_t out_stride,
                                    const QuantizedTensor& w, std::span<const Q8Vector> x,
                                    int64_t row_begin, int64_t row_end) {
  const auto cols = static_cast<int64_t>(x[0].values.size());
  const int64_t groups = cols / x[0].group_size;
  for (int64_t r = row_begin; r < row_end; ++r) {
    for (size_t t = 0; t < x.size(); ++t) {
      out[t * static_cast<size_t>(out_stride) + static_cast<size_t>(r)] =
          row_dot(w.values.data() + r * cols, w.scales.data() + r * groups, x[t]);
    }
  }
}

}  // namespace llama::detail
