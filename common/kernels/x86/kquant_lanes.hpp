// Private to the x86 kernels: what the AVX-512 VNNI K-quant kernels
// (gguf_kquant_vnni.cpp, low_kquant_vnni.cpp) share: their target, the
// definition's 8 lanes from their 16 and its final sum, the spreading of
// sub-block scales over lanes, and the passes of up to kMaxVectors vectors over
// each row.
#pragma once

#include <immintrin.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "kernels/products/gguf_kquant_kernels.hpp"

#define LLAMA_KQUANT_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,fma,f16c")))

namespace llama::detail {

constexpr int kMaxVectors = 8;  // vectors per pass over a row's blocks

// ggml's hsum_float_8 of 8 lanes.
LLAMA_KQUANT_VNNI inline float hsum8(__m256 v) {
  alignas(32) float a[8];
  _mm256_store_ps(a, v);
  return ((a[0] + a[4]) + (a[2] + a[6])) + ((a[1] + a[5]) + (a[3] + a[7]));
}

// A 256-bit register in the low half of a zeroed 512-bit one.
LLAMA_KQUANT_VNNI inline __m512i widen(__m256i v) {
  return _mm512_maskz_inserti64x4(0xFF, _mm512_setzero_si512(), v, 0);
}

// The definition's 8 lanes from 16: the sum of the two 256-bit halves (they
// hold the same bytes of two 32-value runs).
LLAMA_KQUANT_VNNI inline __m256 lanes8(__m512i s) {
  return _mm256_cvtepi32_ps(_mm256_add_epi32(_mm512_maskz_extracti64x4_epi64(0xF, s, 0),
                                             _mm512_maskz_extracti64x4_epi64(0xF, s, 1)));
}

// The permutation that widens 16 int16 scales into 32 lanes, lane i taking
// scale first + i / per.
LLAMA_KQUANT_VNNI inline __m512i spread_index(int first, int per) {
  alignas(64) int16_t idx[32];
  for (int i = 0; i < 32; ++i) idx[i] = static_cast<int16_t>(first + i / per);
  return _mm512_load_si512(idx);
}

// One pass over a row's blocks for n vectors from t0: out[t * out_stride] for
// vector t0 + t.
using VectorsPass = void (*)(const BlockMatrix& w, const std::byte* row, const Q8KBatch& x,
                             int64_t t0, float* out, int64_t out_stride);
using Passes = std::array<VectorsPass, kMaxVectors + 1>;  // [n]: n vectors ([0] unused)

// The passes from `pass`, a generic lambda whose template argument N gives
// the pass over N vectors.
template <typename Pass>
constexpr Passes make_passes(Pass pass) {
  return [&]<size_t... N>(std::index_sequence<N...>) {
    return Passes{pass.template operator()<(N == 0 ? 1 : static_cast<int>(N))>()...};
  }
  (std::make_index_sequence<kMaxVectors + 1>());
}

// Rows [row_begin, row_end) against every vector: out[t * out_stride + r -
// row_begin], passes of kMaxVectors vectors and one over the rest.
LLAMA_KQUANT_VNNI inline void rows_in_passes(const Passes& pass, const BlockMatrix& w,
                                             const Q8KBatch& x, float* out, int64_t out_stride,
                                             int64_t row_begin, int64_t row_end) {
  for (int64_t r = row_begin; r < row_end; ++r) {
    const std::byte* row = w.row(r);
    float* o = out + (r - row_begin);
    int64_t t = 0;
    for (; t + kMaxVectors <= x.n; t += kMaxVectors) {
      pass[kMaxVectors](w, row, x, t, o + t * out_stride, out_stride);
    }
    if (t < x.n) pass[x.n - t](w, row, x, t, o + t * out_stride, out_stride);
  }
}

}  // namespace llama::detail
