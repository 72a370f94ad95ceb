// The AVX-512 VNNI matrix-vector kernel for GGUF Q4_0 blocks against
// q8_0-block activations (decode), read in place (18 bytes a block,
// gguf_rows16_vnni.hpp). Sixteen rows take four blocks at a time
// (q4_0_rows16_quads), the blocks after the last whole four in rows16_vnni's
// pairs, the rest of a range one row at a time (row_q4_0_vnni); all give
// every row the same bits: the portable kernel's fma(float(dot), w_scale *
// x_scale, val) per block, llama.cpp's order for Q4_0. The batch (prefill)
// kernel is q4_0_vnni_batch.cpp.
#include <cstring>
#include <vector>

#include "kernels/products/gguf_kernels.hpp"
#include "kernels/x86/gguf_rows16_vnni.hpp"
#include "llama/kernels/numbers/half.hpp"

namespace llama::detail {
namespace {

using namespace gguf_vnni;

// x for q4_0_rows16_quads: per 4 blocks, their first 16 values each, then
// their last 16 (i8 [blocks / 4, 2, 64]), the order of 4 blocks' nibbles as
// they lie in a row (low nibbles: values 0..15, high: 16..31).
LLAMA_BLOCKS_VNNI void q4_0_x_halves(const int8_t* xv, int64_t groups, int8_t* halves) {
  for (int64_t g = 0; g < groups; ++g) {
    const __m512i a = _mm512_loadu_si512(xv + g * 128);
    const __m512i c = _mm512_loadu_si512(xv + g * 128 + 64);
    _mm512_storeu_si512(halves + g * 128, _mm512_maskz_shuffle_i32x4(kFull16, a, c, 0x88));
    _mm512_storeu_si512(halves + g * 128 + 64, _mm512_maskz_shuffle_i32x4(kFull16, a, c, 0xdd));
  }
}

// Word indices for q4_0_quad_scales' permutes (a second source's words from 32).
struct QuadScaleIndices {
  alignas(64) int16_t pick[32] = {};    // words 0-3: the first's 4 scales, 4-7: the second's
  alignas(64) int16_t join8[32] = {};   // words 0-7 of the first, then of the second
  alignas(64) int16_t join16[32] = {};  // words 0-15 of the first, then of the second
  alignas(64) int16_t out[2][32] = {};  // [k][row] for k = 0, 1 and k = 2, 3
  constexpr QuadScaleIndices() {
    for (int k = 0; k < 4; ++k) {
      pick[k] = static_cast<int16_t>(9 * k);
      pick[4 + k] = static_cast<int16_t>(32 + 9 * k);
    }
    for (int i = 0; i < 8; ++i) {
      join8[i] = static_cast<int16_t>(i);
      join8[8 + i] = static_cast<int16_t>(32 + i);
    }
    for (int i = 0; i < 16; ++i) {
      join16[i] = static_cast<int16_t>(i);
      join16[16 + i] = static_cast<int16_t>(32 + i);
    }
    // After the joins, row i's scale k is word (i / 8) * 32 + (i % 8) * 4 + k.
    for (int h = 0; h < 2; ++h) {
      for (int kk = 0; kk < 2; ++kk) {
        for (int i = 0; i < 16; ++i) {
          out[h][16 * kk + i] = static_cast<int16_t>((i / 8) * 32 + (i % 8) * 4 + 2 * h + kk);
        }
      }
    }
  }
};
constexpr QuadScaleIndices kQuadScaleIndices;

// The f16 scales of 4 consecutive Q4_0 blocks in each of 16 rows (`w` at the
// first block of row 0): out[k] = block k's scale of rows 0..15. A row's 4
// scales are words 0, 9, 18 and 27 of its first 64 bytes; four rounds of
// two-source word permutes gather them (8 + 4 + 2 + 2 vpermt2w). Copied 2 bytes
// at a time they took a third of the kernel's time, gathered (vpgatherdd)
// about a quarter.
LLAMA_BLOCKS_VNNI inline void q4_0_quad_scales(const std::byte* w, int64_t row_bytes,
                                               __m256i out[4]) {
  const QuadScaleIndices& ix = kQuadScaleIndices;
  const __m512i pick = _mm512_load_si512(ix.pick);
  const __m512i join8 = _mm512_load_si512(ix.join8);
  const __m512i join16 = _mm512_load_si512(ix.join16);
  __m512i p[8], q[4];
  for (int j = 0; j < 8; ++j) {
    p[j] = _mm512_permutex2var_epi16(_mm512_loadu_si512(w + 2 * j * row_bytes), pick,
                                     _mm512_loadu_si512(w + (2 * j + 1) * row_bytes));
  }
  for (int j = 0; j < 4; ++j) q[j] = _mm512_permutex2var_epi16(p[2 * j], join8, p[2 * j + 1]);
  // Rows 0-7 and 8-15, 4 scales each, row by row.
  const __m512i u0 = _mm512_permutex2var_epi16(q[0], join16, q[1]);
  const __m512i u1 = _mm512_permutex2var_epi16(q[2], join16, q[3]);
  const __m512i lo = _mm512_permutex2var_epi16(u0, _mm512_load_si512(ix.out[0]), u1);
  const __m512i hi = _mm512_permutex2var_epi16(u0, _mm512_load_si512(ix.out[1]), u1);
  out[0] = _mm512_maskz_extracti64x4_epi64(0xf, lo, 0);
  out[1] = _mm512_maskz_extracti64x4_epi64(0xf, lo, 1);
  out[2] = _mm512_maskz_extracti64x4_epi64(0xf, hi, 0);
  out[3] = _mm512_maskz_extracti64x4_epi64(0xf, hi, 1);
}

// Sixteen Q4_0 rows, four blocks per step (blocks [0, 4 * groups)), one lane
// per row: a row's 4 blocks of nibbles fill one register as they lie, its low
// and high nibbles take one vpdpbusd each against x's halves
// (q4_0_x_halves), so a 128-bit lane holds one block's partial sums; a
// transpose of adds and a 4 x 4 transpose of 128-bit lanes leave a lane per
// row for each block. Then rows16_vnni's chain per block: fewer operations
// per block than its pairs (which take the blocks after these), the same bits.
LLAMA_BLOCKS_VNNI __m512 q4_0_rows16_quads(const std::byte* w, int64_t row_bytes,
                                           const std::byte* next, const int8_t* halves,
                                           const float* xs, const int32_t* corr, int64_t groups) {
  const __m512i low4 = _mm512_set1_epi8(0x0f);
  __m512 val = _mm512_setzero_ps();
  for (int64_t g = 0; g < groups; ++g) {
    const int64_t at = g * 4 * 18;
    if (next != nullptr) {
      for (int64_t line = at * 16; line < (at + 72) * 16; line += 64) {
        _mm_prefetch(reinterpret_cast<const char*>(next) + line, kNextRowsHint);
      }
    }
    // The 16 rows' scales of the 4 blocks (f16 [4][16]), loaded first (see
    // rows16_vnni).
    __m256i half_scales[4];
    q4_0_quad_scales(w + at, row_bytes, half_scales);
    const __m512i xlo = _mm512_loadu_si512(halves + g * 128);
    const __m512i xhi = _mm512_loadu_si512(halves + g * 128 + 64);
    __m512i acc[16];
#pragma GCC unroll 16
    for (int i = 0; i < 16; ++i) {
      const auto* blk = reinterpret_cast<const char*>(w + i * row_bytes + at);
      const auto part = [&](int k) {
        return _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + k * 18 + 2));
      };
      const __m512i v = _mm512_maskz_inserti32x4(
          kFull16,
          _mm512_maskz_inserti32x4(
              kFull16,
              _mm512_maskz_inserti32x4(kFull16, _mm512_castsi128_si512(part(0)), part(1), 1),
              part(2), 2),
          part(3), 3);
      acc[i] = _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_and_si512(v, low4), xlo);
      acc[i] = _mm512_dpbusd_epi32(acc[i], _mm512_and_si512(_mm512_srli_epi16(v, 4), low4), xhi);
    }
    __m512i s4[4];
    sum_quads<16>(acc, s4);  // s4[j] lane L: rows 4j..4j+3 of block 4g + L
    const __m512i u0 = _mm512_maskz_shuffle_i32x4(kFull16, s4[0], s4[1], 0x44);
    const __m512i u1 = _mm512_maskz_shuffle_i32x4(kFull16, s4[0], s4[1], 0xee);
    const __m512i u2 = _mm512_maskz_shuffle_i32x4(kFull16, s4[2], s4[3], 0x44);
    const __m512i u3 = _mm512_maskz_shuffle_i32x4(kFull16, s4[2], s4[3], 0xee);
    const __m512i dots[4] = {_mm512_maskz_shuffle_i32x4(kFull16, u0, u2, 0x88),
                             _mm512_maskz_shuffle_i32x4(kFull16, u0, u2, 0xdd),
                             _mm512_maskz_shuffle_i32x4(kFull16, u1, u3, 0x88),
                             _mm512_maskz_shuffle_i32x4(kFull16, u1, u3, 0xdd)};
    for (int k = 0; k < 4; ++k) {
      const int64_t b = 4 * g + k;
      const __m512 fdots =
          _mm512_maskz_cvtepi32_ps(kFull16, _mm512_sub_epi32(dots[k], _mm512_set1_epi32(corr[b])));
      const __m512 scale = _mm512_maskz_cvtph_ps(kFull16, half_scales[k]);
      val = _mm512_maskz_fmadd_ps(kFull16, fdots, _mm512_mul_ps(scale, _mm512_set1_ps(xs[b])), val);
    }
  }
  return val;
}

// One Q4_0 row against q8_0-block x, block by block (rows16_vnni's operations
// for one lane): the codes of a block as 32 u8 in x's order, one 256-bit
// vpdpbusd, minus corr[b] = 8 * sum of x's block, then val = fma(float(dot),
// w_scale * x_scale, val).
LLAMA_BLOCKS_VNNI float row_q4_0_vnni(const std::byte* w, const int8_t* xv, const float* xs,
                                      const int32_t* corr, int64_t blocks) {
  float val = 0.0f;
  for (int64_t b = 0; b < blocks; ++b) {
    const std::byte* blk = w + b * 18;
    __m256i v =
        _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + 2)));
    v = _mm256_and_si256(_mm256_mask_srli_epi16(v, 0xff00, v, 4), _mm256_set1_epi8(0x0f));
    const __m256i xq = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xv + b * 32));
    const int32_t ival =
        reduce_add256(_mm256_dpbusd_epi32(_mm256_setzero_si256(), v, xq)) - corr[b];
    uint16_t h;
    std::memcpy(&h, blk, 2);
    val = std::fma(static_cast<float>(ival), f16_to_f32(h) * xs[b], val);
  }
  return val;
}

}  // namespace

LLAMA_BLOCKS_VNNI void q4_0_matvec_rows_vnni(std::span<float> out, const BlockMatrix& w,
                                             const Q8View& x, int64_t row_begin, int64_t row_end) {
  const int64_t blocks = w.cols / 32;
  // 8 * sum of each block of x: the codes are w + 8, so this comes off every
  // row's dot.
  const XBlockCorrections corrections(x.values.data(), blocks, 8);
  const int32_t* corr = corrections.data();
  // x in halves for q4_0_rows16_quads (i8 [blocks / 4, 2, 64]), kept per
  // thread from call to call: decode allocates nothing once it has run.
  thread_local std::vector<int8_t> halves_buffer;
  const int8_t* halves = nullptr;
  if (row_end - row_begin >= 16) {
    const auto need = static_cast<size_t>(blocks / 4 * 128);
    if (halves_buffer.size() < need) halves_buffer.resize(need);
    q4_0_x_halves(x.values.data(), blocks / 4, halves_buffer.data());
    halves = halves_buffer.data();
  }
  int64_t r = row_begin;
  const int64_t row_bytes = w.row_bytes();
  for (; r + 16 <= row_end; r += 16) {
    // The last 16 rows of the range prefetch nothing (no address past it).
    const std::byte* next = r + 32 <= row_end ? w.row(r + 16) : nullptr;
    float* o = out.data() + (r - row_begin);
    const __m512 val =
        q4_0_rows16_quads(w.row(r), row_bytes, next, halves, x.scales.data(), corr, blocks / 4);
    rows16_vnni<true>(w.row(r), row_bytes, next, x.values.data(), x.scales.data(), corr, blocks, o,
                      blocks / 4 * 4, val);
  }
  for (; r < row_end; ++r) {
    out[static_cast<size_t>(r - row_begin)] =
        row_q4_0_vnni(w.row(r), x.values.data(), x.scales.data(), corr, blocks);
  }
}

}  // namespace llama::detail
