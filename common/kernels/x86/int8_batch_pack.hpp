// Private to the core: a batch of quantized vectors with 16 tokens in the 16
// lanes of a 64-byte vector, the layout both AVX-512 int8 batch kernels read:
// the VNNI one (llama2c_int8_vnni_batch.cpp) as vpdpbusd's unsigned operand,
// values + 128, and the AMX-INT8 one (int8_tiles_kernel.hpp) as tdpbssd's B
// tile, values as they are: per 4 columns, each token's 4 bytes side by side,
// which is the tile's [K / 4 rows][16 tokens x 4] order.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "kernels/products/llama2c_int8_kernels.hpp"
#include "kernels/x86/int8_vnni_ops.hpp"
#include "llama/kernels/x86/avx512_transpose.hpp"
#include "llama/uninitialized_array.hpp"

namespace llama::detail::vnni {

struct alignas(64) Bytes64 {
  uint8_t b[64];
};
struct alignas(64) Floats16 {
  float f[16];
};

// The batch with tokens in lanes.
struct Packed {
  int64_t tokens = 0, blocks = 0, quads = 0, groups = 0;  // quads = cols / 4
  UninitializedArray<Bytes64> values;                     // i8 or u8 [blocks, quads, 16 tokens, 4]
  UninitializedArray<Floats16> scales;                    // f32 [blocks, groups, 16 tokens]
};

enum class PackedValues { as_is, plus_128 };

// Tokens [16 b, 16 b + 16) of `x` into block b: 64 columns of 16 tokens at a
// time, transposed as 16 x 16 int32. A block short of 16 tokens repeats its
// first one: the extra lanes' results are never stored. x.cols is a multiple
// of 4 (the callers check).
LLAMA_VNNI inline Packed pack_batch16(const Q8Batch& x, PackedValues how) {
  const int64_t n = x.n, cols = x.cols;
  Packed p;
  p.tokens = n;
  p.blocks = (n + 15) / 16;
  p.quads = cols / 4;
  p.groups = cols / x.group_size;
  // Every element is written before it is read: no fill.
  p.values = UninitializedArray<Bytes64>(size_t(p.blocks * p.quads));
  p.scales = UninitializedArray<Floats16>(size_t(p.blocks * p.groups));
  const __m512i bias =
      _mm512_set1_epi8(static_cast<char>(how == PackedValues::plus_128 ? 0x80 : 0));
  for (int64_t b = 0; b < p.blocks; ++b) {
    const int64_t here = std::min<int64_t>(16, n - 16 * b);
    const int64_t t0 = 16 * b;
    const int8_t* src[16];
    for (int j = 0; j < 16; ++j) src[j] = x.values_of(t0 + (j < here ? j : 0));
    Bytes64* out = p.values.data() + b * p.quads;
    for (int64_t c = 0; c < cols; c += 64) {
      __m512i v[16];
      if (cols - c >= 64) {
        for (int j = 0; j < 16; ++j) v[j] = _mm512_loadu_si512(src[j] + c);
      } else {
        const __mmask64 m = first_bytes(cols - c);
        for (int j = 0; j < 16; ++j) v[j] = _mm512_maskz_loadu_epi8(m, src[j] + c);
      }
      avx512::transpose16(v);
      const int64_t quads = std::min<int64_t>(16, (cols - c) / 4);
      for (int64_t i = 0; i < quads; ++i) {
        _mm512_store_si512(out + c / 4 + i, _mm512_xor_si512(v[i], bias));
      }
    }
    Floats16* s = p.scales.data() + b * p.groups;
    for (int64_t g = 0; g < p.groups; g += 16) {
      const auto m = static_cast<__mmask16>(first_bytes(std::min<int64_t>(16, p.groups - g)));
      __m512i v[16];
      for (int j = 0; j < 16; ++j) {
        v[j] =
            _mm512_castps_si512(_mm512_maskz_loadu_ps(m, x.scales_of(t0 + (j < here ? j : 0)) + g));
      }
      avx512::transpose16(v);
      for (int64_t i = 0; i < std::min<int64_t>(16, p.groups - g); ++i) {
        _mm512_store_si512(s + g + i, v[i]);
      }
    }
  }
  return p;
}

}  // namespace llama::detail::vnni
