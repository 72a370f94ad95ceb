// The AVX2 matrix-vector kernel for GGUF Q5_0, Q4_1 and Q5_1 rows (decode,
// and the batch, which runs it per vector): KernelSet::avx2's body (compiled
// again for KernelSet::avx_vnni by legacy_avxvnni.cpp and for
// KernelSet::avx512_vnni by legacy_vnni.cpp, x86/avx2_body.hpp), the
// portable kernel's operations (kernels/products/legacy_products.cpp) in
// 256-bit registers, so its bits. A block's 32 codes become 32 u8 in value
// order (the nibbles, the fifth bits spread from qh); vpmaddubsw against x's
// 32 int8 (pairs of at most 2 x 31 x 128: no saturation) and vpmaddwd by 1
// (VNNI: vpdpbusd)
// give the eight int32 lanes of four values each (Q5_0: minus 16 times the
// lane's sum of x, its codes being value + 16), and the lanes' chains advance
// by one FMA with d_w * d_x; the row ends with hsum_float_8's additions and
// the min term.
#include <immintrin.h>

#include <cstring>

#include "kernels/products/legacy_kernels.hpp"
#include "kernels/x86/avx2_body.hpp"
#include "llama/kernels/numbers/gguf_blocks.hpp"

namespace llama::detail {
namespace {

// 0xFF in byte j where bit j of the 32 bits is set, else 0.
LLAMA_AVX2_BODY inline __m256i spread_bits(uint32_t bits) {
  // Byte j takes byte j / 8 of `bits`, then keeps bit j % 8 of it.
  const __m256i which = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2,
                                         2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3);
  const __m256i select = _mm256_set1_epi64x(0x8040201008040201);
  const __m256i bytes = _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int32_t>(bits)), which);
  return _mm256_cmpeq_epi8(_mm256_and_si256(bytes, select), select);
}

// Eight int32 lanes: lane l = sum of u[j] * x[j] over j in 4l .. 4l + 3.
LLAMA_AVX2_BODY inline __m256i lanes_of(__m256i u, __m256i x) {
  return dot_u8i8(_mm256_setzero_si256(), u, x);
}

LLAMA_AVX2_BODY float row_avx2(BlockKind kind, const std::byte* row, const int8_t* xv,
                               const float* xs, int64_t blocks) {
  const bool q5 = kind != BlockKind::q4_1, with_min = kind != BlockKind::q5_0;
  const int64_t bytes = block_bytes(kind), per_block = with_min ? 2 : 1;
  const int64_t qs_at = bytes - 16, qh_at = with_min ? 4 : 2;
  const __m256i low = _mm256_set1_epi8(0x0F), ones = _mm256_set1_epi8(1);
  __m256 acc = _mm256_setzero_ps();
  float summs = 0.0f;
  for (int64_t b = 0; b < blocks; ++b) {
    const std::byte* blk = row + b * bytes;
    const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + qs_at));
    __m256i codes = _mm256_and_si256(
        _mm256_inserti128_si256(_mm256_castsi128_si256(q), _mm_srli_epi16(q, 4), 1), low);
    if (q5) {
      uint32_t qh;
      std::memcpy(&qh, blk + qh_at, 4);
      codes = _mm256_or_si256(codes, _mm256_and_si256(spread_bits(qh), _mm256_set1_epi8(0x10)));
    }
    const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xv + b * kQK));
    __m256i lanes = lanes_of(codes, x);
    if (kind == BlockKind::q5_0) {
      lanes = _mm256_sub_epi32(lanes, _mm256_slli_epi32(lanes_of(ones, x), 4));
    }
    uint16_t d;
    std::memcpy(&d, blk, 2);
    // F16C's conversion, exact as half.hpp's f16_to_f32 (an out-of-line call
    // per block would cost more than the block's integer work).
    const float dd = _cvtsh_ss(d) * xs[b * per_block];
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(lanes), _mm256_set1_ps(dd), acc);
    if (with_min) {
      uint16_t m;
      std::memcpy(&m, blk + 2, 2);
      summs += _cvtsh_ss(m) * xs[b * per_block + 1];  // exact: two f16s
    }
  }
  __m128 h = _mm_add_ps(_mm256_castps256_ps128(acc), _mm256_extractf128_ps(acc, 1));
  h = _mm_add_ps(h, _mm_movehl_ps(h, h));  // h0 + h2, h1 + h3
  const float sum = _mm_cvtss_f32(_mm_add_ss(h, _mm_movehdup_ps(h)));
  return with_min ? sum + summs : sum;
}

}  // namespace

LLAMA_AVX2_BODY void LLAMA_AVX2_BODY_NAME(legacy_blocks_matvec_rows)(std::span<float> out,
                                                                     const BlockMatrix& w,
                                                                     const Q8View& x,
                                                                     int64_t row_begin,
                                                                     int64_t row_end) {
  const int64_t blocks = w.cols / kQK;
  for (int64_t r = row_begin; r < row_end; ++r) {
    out[static_cast<size_t>(r - row_begin)] =
        row_avx2(w.kind, w.row(r), x.values.data(), x.scales.data(), blocks);
  }
}

}  // namespace llama::detail
