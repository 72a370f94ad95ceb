// The AVX-512 VNNI matrix-vector kernel for GGUF Q8_0 blocks (decode), read
// in place (34 bytes a block, gguf_rows16_vnni.hpp), and the unpacking of
// Q8_0 rows for q8_0_blocks_matmat_rows' tiles.
//
// Sixteen rows at a time, a lane per row (rows16_vnni, gguf_rows16_vnni.hpp),
// the rest of a range two rows, then one, at a time; all three give every row
// the same bits. Sixteen rows take the bulk because they come much nearer a
// plain read's rate from DRAM than two rows do, and take less time per block
// from cache as well. The two-row form:
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
#include <cstring>

#include "kernels/products/gguf_kernels.hpp"
#include "kernels/x86/gguf_rows16_vnni.hpp"
#include "llama/kernels/numbers/half.hpp"

namespace llama::detail {
namespace {

using namespace gguf_vnni;

constexpr int64_t kStep = 16;  // blocks per step

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
  const XBlockCorrections corrections(x.values.data(), blocks, 128);
  const int32_t* corr = corrections.data();
  int64_t r = row_begin;
  const int64_t row_bytes = w.row_bytes();
  for (; r + 16 <= row_end; r += 16) {
    // The last 16 rows of the range prefetch nothing (no address past it).
    const std::byte* next = r + 32 <= row_end ? w.row(r + 16) : nullptr;
    rows16_vnni<false>(w.row(r), row_bytes, next, x.values.data(), x.scales.data(), corr, blocks,
                       out.data() + (r - row_begin));
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
