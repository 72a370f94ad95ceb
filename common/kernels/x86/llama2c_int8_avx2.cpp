// q8_matvec_rows (llama2.c's int8 decode) with AVX2: KernelSet::avx2's body,
// compiled again for KernelSet::avx_vnni by llama2c_int8_avx2_avxvnni.cpp
// (x86/avx2_body.hpp); the portable definition's bits.
//
// Eight rows at a time, for group sizes of whole 32-byte vectors: per group,
// each row's int32 dot (|w| times x with w's sign, as x86/gguf_q8_0_avx2.cpp
// does: vpmaddubsw's pairs of at most 2 x 128 x 127 never saturate, x being
// within +-127; integer sums are exact in any order), the eight dots reduced
// into one register's lanes, and each lane then runs its row's chain val =
// fma(float(dot) * w_scale, x_scale, val) group by group, runq.c's order. A
// lane is one row alone (rows past the range repeat the last row and are not
// stored). Other group sizes take the portable loop.
#include <immintrin.h>

#include <algorithm>

#include "kernels/products/llama2c_int8_kernels.hpp"
#include "kernels/x86/avx2_body.hpp"

namespace llama::detail {
namespace {

constexpr int kRows = 8;

// Rows [r0, r0 + n), n <= 8, into out[0, n); next: the following 8 rows
// (contiguous), or null, prefetched meanwhile (prefetch_next_rows).
LLAMA_AVX2_BODY void rows8(float* out, const QuantizedTensor& w, const Q8View& x, int64_t r0,
                           int64_t n, const int8_t* next) {
  const auto cols = static_cast<int64_t>(x.values.size());
  const int64_t gs = x.group_size, groups = cols / gs;
  const int8_t* row[kRows];
  alignas(32) int32_t scale_index[kRows];  // row i's first scale, in floats from w.scales
  for (int i = 0; i < kRows; ++i) {
    const int64_t r = r0 + std::min<int64_t>(i, n - 1);
    row[i] = w.values.data() + r * cols;
    scale_index[i] = static_cast<int32_t>(r * groups);
  }
  const __m256i index = _mm256_load_si256(reinterpret_cast<const __m256i*>(scale_index));
  __m256 val = _mm256_setzero_ps();
  for (int64_t g = 0; g < groups; ++g) {
    __m256i dots[kRows];
    for (int i = 0; i < kRows; ++i) dots[i] = _mm256_setzero_si256();
    for (int64_t k = g * gs; k < (g + 1) * gs; k += 32) {
      if (next != nullptr) prefetch_next_rows(next, k * kRows, (k + 32) * kRows);
      const __m256i xv = load32(x.values.data() + k);
      for (int i = 0; i < kRows; ++i) {
        dots[i] = dot_i8i8(dots[i], load32(row[i] + k), xv);
      }
    }
    const __m256 dot = _mm256_cvtepi32_ps(reduce8(dots));
    const __m256 ws =
        _mm256_i32gather_ps(w.scales.data() + g, index, 4);  // row i's scale of group g
    const __m256 xs = _mm256_set1_ps(x.scales[static_cast<size_t>(g)]);
    val = _mm256_fmadd_ps(_mm256_mul_ps(dot, ws), xs, val);
  }
  alignas(32) float lanes[kRows];
  _mm256_store_ps(lanes, val);
  std::copy_n(lanes, n, out);
}

}  // namespace

LLAMA_AVX2_BODY void LLAMA_AVX2_BODY_NAME(q8_matvec_rows)(std::span<float> out,
                                                          const QuantizedTensor& w, const Q8View& x,
                                                          int64_t row_begin, int64_t row_end) {
  if (x.group_size % 32 != 0 || static_cast<int64_t>(w.scales.size()) > int64_t{0x7fffffff}) {
    // Groups that split a 32-byte vector, or scales past a 32-bit gather index.
    q8_matvec_rows_portable(out, w, x, row_begin, row_end);
    return;
  }
  const auto cols = static_cast<int64_t>(x.values.size());
  for (int64_t r = row_begin; r < row_end; r += kRows) {
    const int8_t* next = r + 2 * kRows <= row_end ? w.values.data() + (r + kRows) * cols : nullptr;
    rows8(out.data() + (r - row_begin), w, x, r, std::min<int64_t>(kRows, row_end - r), next);
  }
}

}  // namespace llama::detail
