// q8_0_blocks_matvec_rows (Q8_0 and Q4_0 weights against q8_0 blocks) with
// AVX2: KernelSet::avx2's body, the portable definition's bits (compiled again
// for KernelSet::avx_vnni by gguf_q8_0_avxvnni.cpp, x86/avx2_body.hpp).
//
// Eight rows at a time: per block, each row's int32 dot of 32 products
// (Q8_0: |w| times x with w's sign, vpmaddubsw into int16 pairs of at most
// 2 x 128 x 127, no saturation; then vpmaddwd; AVX-VNNI: vpdpbusd. Q4_0: the
// codes 0..15 themselves times x, pairs of at most 2 x 15 x 127, from an
// accumulator at -8 * sum of x's block, so no sign or offset work per row;
// integer sums are exact in any order), the eight dots reduced into one
// register's lanes, and each lane then runs its row's fma chain over the
// blocks in the definition's order.
// A lane is one row alone, so a row's result does not depend on the others
// in its group (rows past the range repeat the last row and are not stored).
// Also Q4_0 rows unpacked to i8 for the int8 batch kernel (prefill).
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/products/gguf_kernels.hpp"
#include "kernels/x86/avx2_body.hpp"
#include "llama/kernels/numbers/gguf_blocks.hpp"

namespace llama::detail {
namespace {

constexpr int kRows = 8;

// Q4_0 block b of a row as its 32 codes (u8 0..15, x's order: the low
// nibbles, then the high ones) and its f16 scale: the 16 bytes in both
// halves, the upper half's 64-bit lanes shifted down a nibble.
LLAMA_AVX2_BODY inline __m256i q4_0_codes(const std::byte* row, int64_t b, uint16_t& d) {
  const std::byte* blk = row + b * static_cast<int64_t>(sizeof(BlockQ4_0));
  std::memcpy(&d, blk, 2);
  const __m256i qs =
      _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + 2)));
  return _mm256_and_si256(_mm256_srlv_epi64(qs, _mm256_setr_epi64x(0, 0, 4, 4)),
                          _mm256_set1_epi8(0x0F));
}

// Block b of a row as 32 int8 values (Q4_0: codes - 8) and its f16 scale.
template <bool kQ4>
LLAMA_AVX2_BODY inline __m256i block_values(const std::byte* row, int64_t b, uint16_t& d) {
  if constexpr (kQ4) {
    return _mm256_sub_epi8(q4_0_codes(row, b, d), _mm256_set1_epi8(8));
  } else {
    const std::byte* blk = row + b * static_cast<int64_t>(sizeof(BlockQ8_0));
    std::memcpy(&d, blk, 2);
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 2));
  }
}

// Rows [r0, r0 + n) into out; next: the following group's rows (contiguous),
// or null, prefetched meanwhile (prefetch_next_rows).
template <bool kQ4>
LLAMA_AVX2_BODY void rows8(float* out, const BlockMatrix& w, const Q8View& x, int64_t r0, int64_t n,
                           const std::byte* next) {
  const int64_t blocks = w.cols / kQK;
  constexpr int64_t kBytes = kQ4 ? sizeof(BlockQ4_0) : sizeof(BlockQ8_0);
  const std::byte* row[kRows];
  for (int i = 0; i < kRows; ++i) row[i] = w.row(r0 + std::min<int64_t>(i, n - 1));
  __m256 val = _mm256_setzero_ps();
  for (int64_t b = 0; b < blocks; ++b) {
    if (next != nullptr) prefetch_next_rows(next, b * kBytes * kRows, (b + 1) * kBytes * kRows);
    const __m256i xv =
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.values.data() + b * kQK));
    __m256i dots[kRows];
    alignas(16) uint16_t d16[kRows];
    if constexpr (kQ4) {
      // Lanes summing to -8 * sum of the block of x (x within +-127, so -x fits).
      const __m256i minus8 = dot_u8i8(_mm256_setzero_si256(), _mm256_set1_epi8(8),
                                      _mm256_sign_epi8(xv, _mm256_set1_epi8(-1)));
      for (int i = 0; i < kRows; ++i) dots[i] = dot_u8i8(minus8, q4_0_codes(row[i], b, d16[i]), xv);
    } else {
      for (int i = 0; i < kRows; ++i)
        dots[i] = dot_i8i8(_mm256_setzero_si256(), block_values<false>(row[i], b, d16[i]), xv);
    }
    const __m256 dot = _mm256_cvtepi32_ps(reduce8(dots));
    const __m256 d = _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(d16)));
    const __m256 xs = _mm256_set1_ps(x.scales[static_cast<size_t>(b)]);
    // Q4_0: fma(float(dot), w_scale * x_scale, val); Q8_0: fma(float(dot) * w_scale, x_scale, val).
    val = kQ4 ? _mm256_fmadd_ps(dot, _mm256_mul_ps(d, xs), val)
              : _mm256_fmadd_ps(_mm256_mul_ps(dot, d), xs, val);
  }
  alignas(32) float lanes[kRows];
  _mm256_store_ps(lanes, val);
  std::copy_n(lanes, n, out);
}

}  // namespace

LLAMA_AVX2_BODY void LLAMA_AVX2_BODY_NAME(q8_0_blocks_matvec_rows)(std::span<float> out,
                                                                   const BlockMatrix& w,
                                                                   const Q8View& x,
                                                                   int64_t row_begin,
                                                                   int64_t row_end) {
  for (int64_t r = row_begin; r < row_end; r += kRows) {
    const int64_t n = std::min<int64_t>(kRows, row_end - r);
    float* o = out.data() + (r - row_begin);
    const std::byte* next = r + 2 * kRows <= row_end ? w.row(r + kRows) : nullptr;
    if (w.kind == BlockKind::q4_0) {
      rows8<true>(o, w, x, r, n, next);
    } else {
      rows8<false>(o, w, x, r, n, next);
    }
  }
}

#if LLAMA_AVX2_BODY_VNNI == 0
// Q4_0 rows to i8 (code - 8) and f32 scales for the avx2 sets' int8 batch
// kernel (one copy: AVX-VNNI changes nothing here).
LLAMA_AVX2_BODY void unpack_q4_0_rows_avx2(const BlockMatrix& w, int64_t row_begin, int64_t n,
                                           int8_t* values, float* scales) {
  const int64_t blocks = w.cols / kQK;
  for (int64_t i = 0; i < n; ++i) {
    const std::byte* row = w.row(row_begin + i);
    for (int64_t b = 0; b < blocks; ++b) {
      uint16_t d;
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(values + i * w.cols + b * kQK),
                          block_values<true>(row, b, d));
      scales[i * blocks + b] = _cvtsh_ss(d);
    }
  }
}
#endif

}  // namespace llama::detail
