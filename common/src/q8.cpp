// Q8_0 kernels: quantization as runq.c and export.py do it, and the int8
// matrix-vector product in a portable and an AVX-512 VNNI version.
#include "llama/q8.hpp"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "llama/error.hpp"

namespace llama {
namespace {

int8_t to_int8(float r) {
  if (!(r == r)) return 0;  // NaN: an all-zero group divides 0 by 0
  // Never -128: the VNNI kernel negates activation values.
  return static_cast<int8_t>(std::clamp(r, -127.0f, 127.0f));
}

int32_t dot_group_portable(const int8_t* w, const int8_t* x, int64_t n) {
  int32_t acc = 0;
  for (int64_t k = 0; k < n; ++k) acc += int32_t{w[k]} * int32_t{x[k]};
  return acc;
}

// _mm512_reduce_add_epi32 without GCC 12's spurious "may be used uninitialized".
__attribute__((target("avx512f,avx512bw,avx512vnni"))) int32_t reduce_add_vnni(__m512i v) {
  const __m256i hi = _mm512_mask_extracti64x4_epi64(_mm256_setzero_si256(), 0xff, v, 1);
  const __m256i lo = _mm512_mask_extracti64x4_epi64(_mm256_setzero_si256(), 0xff, v, 0);
  const __m256i s8 = _mm256_add_epi32(lo, hi);
  __m128i s4 = _mm_add_epi32(_mm256_castsi256_si128(s8), _mm256_extracti128_si256(s8, 1));
  s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0x4e));
  s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0xb1));
  return _mm_cvtsi128_si32(s4);
}

// sum w[k] * x[k] with vpdpbusd, which multiplies unsigned by signed bytes:
// |w| (as unsigned, so -128 is 128) times x with w's sign. x comes from
// quantize_activations, so |x| <= 127 and negating it cannot overflow.
__attribute__((target("avx512f,avx512bw,avx512vnni"))) int32_t dot_group_vnni(const int8_t* w,
                                                                              const int8_t* x,
                                                                              int64_t n) {
  __m512i acc = _mm512_setzero_si512();
  const __m512i zero = _mm512_setzero_si512();
  for (int64_t k = 0; k < n; k += 64) {
    const int64_t left = n - k;
    const __mmask64 m = left >= 64 ? ~__mmask64{0} : (__mmask64{1} << left) - 1;
    const __m512i wv = _mm512_maskz_loadu_epi8(m, w + k);
    const __m512i xv = _mm512_maskz_loadu_epi8(m, x + k);
    const __m512i xs = _mm512_mask_sub_epi8(xv, _mm512_movepi8_mask(wv), zero, xv);
    acc = _mm512_dpbusd_epi32(acc, _mm512_abs_epi8(wv), xs);
  }
  return reduce_add_vnni(acc);
}

template <int32_t (*Dot)(const int8_t*, const int8_t*, int64_t)>
void matvec_rows(std::span<float> out, const QuantizedTensor& w, const Q8Vector& x,
                 int64_t row_begin, int64_t row_end) {
  const int64_t cols = static_cast<int64_t>(x.values.size()), gs = x.group_size;
  const int64_t groups = cols / gs;
  for (int64_t r = row_begin; r < row_end; ++r) {
    const int8_t* wr = w.values.data() + r * cols;
    const float* ws = w.scales.data() + r * groups;
    float val = 0.0f;
    for (int64_t g = 0; g < groups; ++g) {
      const int32_t ival = Dot(wr + g * gs, x.values.data() + g * gs, gs);
      // runq.c's `val += ival * ws * xs`, contracted into an FMA as in the reference build.
      val = std::fma(static_cast<float>(ival) * ws[g], x.scales[static_cast<size_t>(g)], val);
    }
    out[static_cast<size_t>(r - row_begin)] = val;
  }
}

}  // namespace

const char* to_string(Q8Kernel kernel) {
  return kernel == Q8Kernel::avx512_vnni ? "avx512-vnni" : "portable";
}

bool q8_kernel_available(Q8Kernel kernel) {
  if (kernel == Q8Kernel::portable) return true;
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vnni");
}

Q8Kernel best_q8_kernel() {
  const char* forced = std::getenv("LLAMA_Q8_KERNEL");
  if (forced != nullptr && std::strcmp(forced, "portable") == 0) return Q8Kernel::portable;
  return q8_kernel_available(Q8Kernel::avx512_vnni) ? Q8Kernel::avx512_vnni : Q8Kernel::portable;
}

void Q8Vector::resize(int64_t n, int64_t gs) {
  if (gs <= 0 || n < 0 || n % gs != 0) {
    throw Error("Q8_0 vector of " + std::to_string(n) +
                " values needs a group size dividing it, got " + std::to_string(gs));
  }
  values.assign(static_cast<size_t>(n), 0);
  scales.assign(static_cast<size_t>(n / gs), 0.0f);
  group_size = gs;
}

void quantize_activations(std::span<const float> x, Q8Vector& out) {
  const size_t gs = static_cast<size_t>(out.group_size);
  for (size_t g = 0; g < out.scales.size(); ++g) {
    const float* xg = x.data() + g * gs;
    float wmax = 0.0f;
    for (size_t i = 0; i < gs; ++i) wmax = std::max(wmax, std::fabs(xg[i]));
    const float scale = wmax / 127.0f;
    out.scales[g] = scale;
    for (size_t i = 0; i < gs; ++i) out.values[g * gs + i] = to_int8(std::round(xg[i] / scale));
  }
}

void q8_matvec_rows(std::span<float> out, const QuantizedTensor& w, const Q8Vector& x,
                    int64_t row_begin, int64_t row_end, Q8Kernel kernel) {
  if (kernel == Q8Kernel::avx512_vnni) {
    matvec_rows<dot_group_vnni>(out, w, x, row_begin, row_end);
  } else {
    matvec_rows<dot_group_portable>(out, w, x, row_begin, row_end);
  }
}

void dequantize(const QuantizedTensor& t, std::span<float> out) {
  const size_t gs = static_cast<size_t>(t.group_size);
  for (size_t i = 0; i < t.values.size(); ++i) {
    out[i] = static_cast<float>(t.values[i]) * t.scales[i / gs];
  }
}

float quantize_q80(std::span<const float> w, int64_t group_size, std::span<int8_t> values,
                   std::span<float> scales) {
  const size_t gs = static_cast<size_t>(group_size);
  float max_err = 0.0f;
  for (size_t g = 0; g < scales.size(); ++g) {
    const float* wg = w.data() + g * gs;
    float wmax = 0.0f;
    for (size_t i = 0; i < gs; ++i) wmax = std::max(wmax, std::fabs(wg[i]));
    const float scale = wmax / 127.0f;
    scales[g] = scale;
    for (size_t i = 0; i < gs; ++i) {
      const int8_t q = to_int8(std::nearbyint(wg[i] / scale));  // default mode: half to even
      values[g * gs + i] = q;
      max_err = std::max(max_err, std::fabs(static_cast<float>(q) * scale - wg[i]));
    }
  }
  return max_err;
}

}  // namespace llama
