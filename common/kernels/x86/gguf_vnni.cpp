// The AVX-512 VNNI matrix-vector kernels for GGUF Q8_0 and Q4_0 blocks
// (decode), read in place: a Q8_0 block is an f16 scale then 32 int8 values,
// 34 bytes; a Q4_0 block an f16 scale then 16 bytes of nibbles, 18 bytes.
// Q4_0 takes sixteen rows four blocks at a time (q4_0_rows16_quads), the
// blocks after the last whole four in rows16_vnni's pairs, the rest of a range
// one row at a time. The Q8_0 kernel:
//
// Sixteen rows at a time, a lane per row (rows16_vnni, below: the form of the
// version-2 kernel, llama2c_int8_vnni.cpp), the rest of a range two rows, then
// one, at a time; all three give every row the same bits. Sixteen rows take
// the bulk because they come much nearer a plain read's rate from DRAM than
// two rows do, and take less time per block from cache as well. The two-row
// form:
//
// Two rows at a time (each streams in order, prefetched 4 KiB ahead; two rows
// interleave their FMA chains), 16 blocks per step: two blocks' values share
// a 512-bit register (two 256-bit loads), are flipped to
// w + 128 (u8, vpdpbusd's unsigned operand) and multiplied with x's 64 bytes;
// the 8 accumulators are reduced by a transpose of adds that keeps their
// 256-bit halves apart (a lane per block). x's 128 * sum per block (exact
// int32, once per call) is subtracted, the 16 f16 scales are gathered and
// widened, and float(dot) * w_scale feeds the row's chain val = fma(.,
// x_scale, val) block by block: the portable kernel's operations, so the same
// bits. Two rows rather than one, and the reduction that keeps the halves
// apart rather than one of 16 vectors, each take less time per block.
#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/products/gguf_kernels.hpp"
#include "kernels/x86/int8_vnni_ops.hpp"
#include "llama/kernels/numbers/half.hpp"
#include "llama/uninitialized_array.hpp"

namespace llama::detail {
namespace {

using namespace vnni;

// vnni's operations plus 256-bit vpdpbusd (AVX-512 VL).
#define LLAMA_BLOCKS_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))

constexpr int64_t kStep = 16;  // blocks per step

// The cache level rows16_vnni prefetches the next 16 rows into.
constexpr auto kNextRowsHint = _MM_HINT_T2;

// Bytes ahead of the current step a row is prefetched: eight steps, 4352
// bytes. The hardware prefetchers fall behind two interleaved rows streamed
// from DRAM, and fewer steps ahead leave the kernel waiting on memory; more
// gain nothing.
constexpr int64_t kPrefetchAhead = 8 * kStep * 34;

// The 544 bytes of one step, kPrefetchAhead ahead of `w` (prefetches past the
// row's end are harmless hints).
LLAMA_BLOCKS_VNNI inline void prefetch_step(const std::byte* w) {
  const char* p = reinterpret_cast<const char*>(w) + kPrefetchAhead;
  for (int64_t i = 0; i < kStep * 34; i += 64) _mm_prefetch(p + i, _MM_HINT_T0);
}

// Lane 2j of the result is the sum of v[j]'s low 8 lanes, lane 2j + 1 of its
// high 8 lanes (j < 8): a transpose of adds that stops before the 256-bit
// halves meet, then one permutation back into block order.
LLAMA_BLOCKS_VNNI inline __m512i reduce8_halves(const __m512i v[8]) {
  __m512i s2[4], s4[2];
  for (int i = 0; i < 4; ++i) {
    s2[i] = _mm512_add_epi32(_mm512_maskz_unpacklo_epi32(kFull16, v[2 * i], v[2 * i + 1]),
                             _mm512_maskz_unpackhi_epi32(kFull16, v[2 * i], v[2 * i + 1]));
  }
  // Each 128-bit lane k of s4[i] holds v[4i .. 4i+3]'s partial sums over lane k.
  for (int i = 0; i < 2; ++i) {
    s4[i] = _mm512_add_epi32(_mm512_maskz_unpacklo_epi64(kFull8, s2[2 * i], s2[2 * i + 1]),
                             _mm512_maskz_unpackhi_epi64(kFull8, s2[2 * i], s2[2 * i + 1]));
  }
  // 128-bit lanes 0 + 1 are the low halves, 2 + 3 the high ones: lanes of t are
  // [lo v0..v3, hi v0..v3, lo v4..v7, hi v4..v7].
  const __m512i t = _mm512_add_epi32(_mm512_maskz_shuffle_i32x4(kFull16, s4[0], s4[1], 0x88),
                                     _mm512_maskz_shuffle_i32x4(kFull16, s4[0], s4[1], 0xdd));
  const __m512i order = _mm512_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7, 8, 12, 9, 13, 10, 14, 11, 15);
  return _mm512_maskz_permutexvar_epi32(kFull16, order, t);
}

// Blocks [b0, b0 + 16) of row `w` against x: the 16 int32 dots, uncorrected.
LLAMA_BLOCKS_VNNI inline __m512i dots16(const std::byte* w, const int8_t* x) {
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
  __m512i acc[8];
#pragma GCC unroll 8
  for (int j = 0; j < 8; ++j) {
    // Block 2j's 32 values in the low half, block 2j + 1's in the high half
    // (two plain 256-bit loads: masked 512-bit ones straddling cache lines
    // stream from DRAM far more slowly).
    const auto* lo = reinterpret_cast<const __m256i*>(w + (2 * j) * 34 + 2);
    const auto* hi = reinterpret_cast<const __m256i*>(w + (2 * j + 1) * 34 + 2);
    const __m512i wv = _mm512_maskz_inserti64x4(
        kFull8, _mm512_maskz_inserti64x4(kFull8, _mm512_setzero_si512(), _mm256_loadu_si256(lo), 0),
        _mm256_loadu_si256(hi), 1);
    acc[j] = _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_xor_si512(wv, flip),
                                 _mm512_loadu_si512(x + 64 * j));
  }
  return reduce8_halves(acc);
}

// The 16 f16 scales of blocks [0, 16) from `w`, widened.
LLAMA_BLOCKS_VNNI inline __m512 scales16(const std::byte* w) {
  const __m512i at =
      _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                         _mm512_set1_epi32(34));
  // 4 bytes at each block's start: the scale and two values (inside the block).
  const __m512i raw = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), kFull16, at, w, 1);
  return _mm512_maskz_cvtph_ps(kFull16, _mm512_maskz_cvtepi32_epi16(kFull16, raw));
}

LLAMA_BLOCKS_VNNI float row_dot_vnni(const std::byte* w, const int8_t* xv, const float* xs,
                                     const int32_t* corr, int64_t blocks) {
  alignas(64) float scaled[kStep];
  float val = 0.0f;
  int64_t b = 0;
  for (; b + kStep <= blocks; b += kStep) {
    prefetch_step(w + b * 34);
    const __m512i dots =
        _mm512_sub_epi32(dots16(w + b * 34, xv + b * 32), _mm512_loadu_si512(corr + b));
    _mm512_store_ps(scaled,
                    _mm512_mul_ps(_mm512_maskz_cvtepi32_ps(kFull16, dots), scales16(w + b * 34)));
    for (int j = 0; j < kStep; ++j) val = std::fma(scaled[j], xs[b + j], val);
  }
  for (; b < blocks; ++b) {
    const std::byte* blk = w + b * 34;
    const __m256i wv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 2));
    const __m256i xq = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xv + b * 32));
    const __m256i d =
        _mm256_dpbusd_epi32(_mm256_setzero_si256(),
                            _mm256_xor_si256(wv, _mm256_set1_epi8(static_cast<char>(0x80))), xq);
    const int32_t ival = reduce_add256(d) - corr[b];
    uint16_t h;
    std::memcpy(&h, blk, 2);
    val = std::fma(static_cast<float>(ival) * f16_to_f32(h), xs[b], val);
  }
  return val;
}

// Rows w0 and w1 at once: the same operations as row_dot_vnni for each, with
// the two FMA chains interleaved so that neither waits on its own latency.
LLAMA_BLOCKS_VNNI void row_dot2_vnni(const std::byte* w0, const std::byte* w1, const int8_t* xv,
                                     const float* xs, const int32_t* corr, int64_t blocks,
                                     float* out) {
  alignas(64) float s0[kStep], s1[kStep];
  float v0 = 0.0f, v1 = 0.0f;
  int64_t b = 0;
  for (; b + kStep <= blocks; b += kStep) {
    prefetch_step(w0 + b * 34);
    prefetch_step(w1 + b * 34);
    const __m512i c = _mm512_loadu_si512(corr + b);
    const __m512i d0 = _mm512_sub_epi32(dots16(w0 + b * 34, xv + b * 32), c);
    const __m512i d1 = _mm512_sub_epi32(dots16(w1 + b * 34, xv + b * 32), c);
    _mm512_store_ps(s0,
                    _mm512_mul_ps(_mm512_maskz_cvtepi32_ps(kFull16, d0), scales16(w0 + b * 34)));
    _mm512_store_ps(s1,
                    _mm512_mul_ps(_mm512_maskz_cvtepi32_ps(kFull16, d1), scales16(w1 + b * 34)));
    for (int j = 0; j < kStep; ++j) {
      v0 = std::fma(s0[j], xs[b + j], v0);
      v1 = std::fma(s1[j], xs[b + j], v1);
    }
  }
  for (int r = 0; r < 2; ++r) {
    const std::byte* w = r == 0 ? w0 : w1;
    float val = r == 0 ? v0 : v1;
    for (int64_t t = b; t < blocks; ++t) {
      const std::byte* blk = w + t * 34;
      const __m256i wv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 2));
      const __m256i xq = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xv + t * 32));
      const __m256i d =
          _mm256_dpbusd_epi32(_mm256_setzero_si256(),
                              _mm256_xor_si256(wv, _mm256_set1_epi8(static_cast<char>(0x80))), xq);
      const int32_t ival = reduce_add256(d) - corr[t];
      uint16_t h;
      std::memcpy(&h, blk, 2);
      val = std::fma(static_cast<float>(ival) * f16_to_f32(h), xs[t], val);
    }
    out[r] = val;
  }
}

// A Q4_0 row's blocks b and (when `pair`) b + 1 as u8 values 0..15 (the
// codes, w + 8) in x's order: [b's low nibbles (values 0..15), b's high ones
// (16..31), the same of b + 1]; without `pair` the upper half repeats b (x's
// upper half is zero there).
LLAMA_BLOCKS_VNNI inline __m512i q4_0_pair(const std::byte* blk, bool pair) {
  __m512i v = _mm512_maskz_broadcast_i32x4(
      kFull16, _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + 2)));
  if (pair) {
    v = _mm512_mask_broadcast_i32x4(v, 0xff00,
                                    _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + 20)));
  }
  // 128-bit lanes 1 and 3 (16-bit elements 8..15, 24..31): the high nibbles.
  v = _mm512_mask_srli_epi16(v, 0xff00ff00, v, 4);
  return _mm512_and_si512(v, _mm512_set1_epi8(0x0f));
}

// Sixteen rows [w, w + 16 * row_bytes) of Q8_0 (Q4 false: 34-byte blocks) or
// Q4_0 (18-byte blocks) at once, one lane per row: per pair of blocks each
// row's 64 values (Q8_0: flipped to w + 128; Q4_0: its codes, w + 8) take one
// vpdpbusd against x's 64 bytes (the pair's 256-bit halves apart),
// reduce16_halves turns the 16 accumulators into a lane per row for each block,
// corr[b] (x's 128 or 8 * sum) comes off, and the 16 rows' chains val =
// fma(float(dot) * w_scale, x_scale, val) (Q4_0: fma(float(dot), w_scale *
// x_scale, val), llama.cpp's order for it) advance side by side: every row's
// operations are the one-row kernels', so the same bits. The 16 rows are 16
// streams the hardware prefetchers follow badly, so the next 16 rows
// (contiguous) are prefetched in order meanwhile, as llama2c_int8_vnni.cpp
// does for version 2 files.
template <bool Q4>
LLAMA_BLOCKS_VNNI void rows16_vnni(const std::byte* w, int64_t row_bytes, const std::byte* next,
                                   const int8_t* xv, const float* xs, const int32_t* corr,
                                   int64_t blocks, float* out, int64_t g_begin = 0,
                                   __m512 val = _mm512_setzero_ps()) {
  constexpr int64_t kBytes = Q4 ? 18 : 34;
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
  // Lane i: where row i's block starts, relative to row 0's.
  const __m512i row_at =
      _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                         _mm512_set1_epi32(static_cast<int32_t>(row_bytes)));
  for (int64_t g = g_begin; g < blocks; g += 2) {
    const bool pair = g + 1 < blocks;
    if (next != nullptr) {
      // The next rows' bytes in the same proportion as this step covers.
      const int64_t from = g * kBytes * 16, to = std::min(blocks, g + 2) * kBytes * 16;
      for (int64_t line = from; line < to; line += 64) {
        _mm_prefetch(reinterpret_cast<const char*>(next) + line, kNextRowsHint);
      }
    }
    const __m512i xq =
        pair ? _mm512_loadu_si512(xv + g * 32)
             : _mm512_maskz_inserti64x4(
                   kFull8, _mm512_setzero_si512(),
                   _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xv + g * 32)), 0);
    // Q4_0: the 16 rows' scales of the step's blocks (f16 [2, 16]) by plain
    // loads, first, so their stores have drained by the time the vector load
    // reads them: two gathers per step took near half of the kernel's time.
    alignas(64) uint16_t half_scales[32];
    if constexpr (Q4) {
      for (int h = 0; h < (pair ? 2 : 1); ++h) {
        for (int i = 0; i < 16; ++i) {
          std::memcpy(&half_scales[16 * h + i], w + i * row_bytes + (g + h) * kBytes, 2);
        }
      }
    }
    __m512i acc[16];
#pragma GCC unroll 16
    for (int i = 0; i < 16; ++i) {
      const std::byte* blk = w + i * row_bytes + g * kBytes;
      __m512i wu;
      if constexpr (Q4) {
        wu = q4_0_pair(blk, pair);
      } else {
        const __m256i lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 2));
        const __m256i hi =
            pair ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 36)) : lo;
        wu = _mm512_xor_si512(
            _mm512_maskz_inserti64x4(
                kFull8, _mm512_maskz_inserti64x4(kFull8, _mm512_setzero_si512(), lo, 0), hi, 1),
            flip);
      }
      acc[i] = _mm512_dpbusd_epi32(_mm512_setzero_si512(), wu, xq);
    }
    __m512i lo, hi;
    reduce16_halves(acc, lo, hi);
    for (int h = 0; h < (pair ? 2 : 1); ++h) {
      const int64_t b = g + h;
      const __m512i dots = _mm512_sub_epi32(h == 0 ? lo : hi, _mm512_set1_epi32(corr[b]));
      const __m512 fdots = _mm512_maskz_cvtepi32_ps(kFull16, dots);
      if constexpr (Q4) {
        const __m512 scale = _mm512_maskz_cvtph_ps(
            kFull16, _mm256_load_si256(reinterpret_cast<const __m256i*>(half_scales + 16 * h)));
        val =
            _mm512_maskz_fmadd_ps(kFull16, fdots, _mm512_mul_ps(scale, _mm512_set1_ps(xs[b])), val);
      } else {
        const __m512i raw =
            _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), kFull16, row_at, w + b * kBytes, 1);
        const __m512 scale =
            _mm512_maskz_cvtph_ps(kFull16, _mm512_maskz_cvtepi32_epi16(kFull16, raw));
        val =
            _mm512_maskz_fmadd_ps(kFull16, _mm512_mul_ps(fdots, scale), _mm512_set1_ps(xs[b]), val);
      }
    }
  }
  _mm512_storeu_ps(out, val);
}

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
    // The 16 rows' scales of the 4 blocks (f16 [4, 16]), loaded first (see
    // rows16_vnni).
    alignas(64) uint16_t half_scales[64];
    for (int k = 0; k < 4; ++k) {
      for (int i = 0; i < 16; ++i) {
        std::memcpy(&half_scales[16 * k + i], w + i * row_bytes + at + k * 18, 2);
      }
    }
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
      const __m512 scale = _mm512_maskz_cvtph_ps(
          kFull16, _mm256_load_si256(reinterpret_cast<const __m256i*>(half_scales + 16 * k)));
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

LLAMA_BLOCKS_VNNI void unpack_q8_0_rows_vnni(const BlockMatrix& w, int64_t row_begin, int64_t n,
                                             int8_t* values, float* scales) {
  const int64_t blocks = w.cols / 32;
  for (int64_t i = 0; i < n; ++i) {
    const std::byte* row = w.row(row_begin + i);
    int8_t* v = values + i * w.cols;
    float* s = scales + i * blocks;
    int64_t b = 0;
    for (; b + kStep <= blocks; b += kStep) {
      _mm512_storeu_ps(s + b, scales16(row + b * 34));
      for (int64_t j = b; j < b + kStep; ++j) {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(v + j * 32),
                            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + j * 34 + 2)));
      }
    }
    for (; b < blocks; ++b) {
      uint16_t h;
      std::memcpy(&h, row + b * 34, 2);
      s[b] = f16_to_f32(h);
      std::memcpy(v + b * 32, row + b * 34 + 2, 32);
    }
  }
}

LLAMA_BLOCKS_VNNI void q8_0_blocks_matvec_rows_vnni(std::span<float> out, const BlockMatrix& w,
                                                    const Q8View& x, int64_t row_begin,
                                                    int64_t row_end) {
  const int64_t blocks = w.cols / 32;
  // 128 * sum of each block of x: what the u8 flip adds to every row's dot.
  // On the stack up to 4096 blocks (131072 columns): decode allocates nothing.
  alignas(64) int32_t stack[4096];
  UninitializedArray<int32_t> heap(blocks > 4096 ? static_cast<size_t>(blocks) : 0);
  int32_t* corr = blocks > 4096 ? heap.data() : stack;
  // Q4_0's codes are w + 8: 8 * sum of each block of x comes off instead.
  const bool q4 = w.kind == BlockKind::q4_0;
  const int32_t offset = q4 ? 8 : 128;
  const __m256i ones = _mm256_set1_epi8(1);
  for (int64_t b = 0; b < blocks; ++b) {
    const __m256i xq =
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.values.data() + b * 32));
    const __m256i s = _mm256_dpbusd_epi32(_mm256_setzero_si256(), ones, xq);
    corr[b] = offset * reduce_add256(s);
  }
  // Q4_0's x in halves for q4_0_rows16_quads (i8 [blocks / 4, 2, 64]), kept per
  // thread from call to call: decode allocates nothing once it has run.
  thread_local std::vector<int8_t> halves_buffer;
  const int8_t* halves = nullptr;
  if (q4 && row_end - row_begin >= 16) {
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
    if (q4) {
      const __m512 val =
          q4_0_rows16_quads(w.row(r), row_bytes, next, halves, x.scales.data(), corr, blocks / 4);
      rows16_vnni<true>(w.row(r), row_bytes, next, x.values.data(), x.scales.data(), corr, blocks,
                        o, blocks / 4 * 4, val);
    } else {
      rows16_vnni<false>(w.row(r), row_bytes, next, x.values.data(), x.scales.data(), corr, blocks,
                         o);
    }
  }
  if (q4) {
    for (; r < row_end; ++r) {
      out[static_cast<size_t>(r - row_begin)] =
          row_q4_0_vnni(w.row(r), x.values.data(), x.scales.data(), corr, blocks);
    }
    return;
  }
  for (; r + 2 <= row_end; r += 2) {
    row_dot2_vnni(w.row(r), w.row(r + 1), x.values.data(), x.scales.data(), corr, blocks,
                  out.data() + (r - row_begin));
  }
  if (r < row_end) {
    out[static_cast<size_t>(r - row_begin)] =
        row_dot_vnni(w.row(r), x.values.data(), x.scales.data(), corr, blocks);
  }
}

}  // namespace llama::detail
