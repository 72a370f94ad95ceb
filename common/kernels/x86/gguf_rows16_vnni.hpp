// Private to the x86 kernels: what the AVX-512 VNNI decode kernels for GGUF
// Q8_0 (gguf_q8_0_vnni.cpp) and Q4_0 (q4_0_vnni.cpp) share, both read in
// place: a Q8_0 block is an f16 scale then 32 int8 values, 34 bytes; a Q4_0
// block an f16 scale then 16 bytes of nibbles, 18 bytes. Both take the bulk
// of a range sixteen rows at a time, a lane per row (rows16_vnni, the form of
// the version-2 kernel, llama2c_int8_vnni.cpp), because sixteen rows come much
// nearer a plain read's rate from DRAM than fewer do; the one template keeps
// the two types' lanes the same code. Everything here is inline and compiled
// for VNNI only; the callers check the CPU.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/x86/int8_vnni_ops.hpp"
#include "llama/uninitialized_array.hpp"

// vnni's operations plus 256-bit vpdpbusd (AVX-512 VL).
#define LLAMA_BLOCKS_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))

namespace llama::detail::gguf_vnni {

using namespace vnni;

// The cache level rows16_vnni prefetches the next 16 rows into.
constexpr auto kNextRowsHint = _MM_HINT_T2;

// corr[b] = offset * the sum of x's block b (i8 [blocks, 32]), exact int32:
// what the weights' offset to u8 (Q8_0: w + 128, Q4_0: the codes, w + 8) adds
// to every row's dot of that block.
LLAMA_BLOCKS_VNNI inline void x_block_corrections(const int8_t* xv, int64_t blocks, int32_t offset,
                                                  int32_t* corr) {
  const __m256i ones = _mm256_set1_epi8(1);
  for (int64_t b = 0; b < blocks; ++b) {
    const __m256i xq = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xv + b * 32));
    const __m256i s = _mm256_dpbusd_epi32(_mm256_setzero_si256(), ones, xq);
    corr[b] = offset * reduce_add256(s);
  }
}

// x_block_corrections of x's blocks, on the stack up to 4096 blocks (131072
// columns), so decode allocates nothing; longer rows' on the heap.
class XBlockCorrections {
 public:
  LLAMA_BLOCKS_VNNI XBlockCorrections(const int8_t* xv, int64_t blocks, int32_t offset)
      : heap_(blocks > kStackBlocks ? static_cast<size_t>(blocks) : 0),
        corr_(blocks > kStackBlocks ? heap_.data() : stack_) {
    x_block_corrections(xv, blocks, offset, corr_);
  }
  XBlockCorrections(const XBlockCorrections&) = delete;
  XBlockCorrections& operator=(const XBlockCorrections&) = delete;

  const int32_t* data() const { return corr_; }  // i32 [blocks]

 private:
  static constexpr int64_t kStackBlocks = 4096;
  alignas(64) int32_t stack_[kStackBlocks];
  UninitializedArray<int32_t> heap_;
  int32_t* corr_;
};

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

}  // namespace llama::detail::gguf_vnni
