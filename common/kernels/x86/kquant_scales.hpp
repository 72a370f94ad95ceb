// Private to the x86 kernels: a Q4_K/Q5_K block's packed 6-bit scales and
// mins, and a Q3_K block's signed 6-bit scales, in one register, shared by
// the AVX-512 VNNI and the AVX2 K-quant kernels. Plain code: compiled for whichever target inlines
// it.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

namespace llama::detail {

// A Q4_K block's 12 scale bytes as 8 scales then 8 mins, 6 bits each: ggml's
// unpacking with 32-bit masks (q4_k_scale_min's values; the tests compare).
inline __m128i q4_k_scales_mins(const uint8_t* packed) {
  constexpr uint32_t kLow6 = 0x3f3f3f3f, kLow4 = 0x0f0f0f0f, kLow2 = 0x03030303;
  uint32_t u[3];
  std::memcpy(u, packed, 12);
  // The four words go into the register from general registers: written to
  // the stack and read back as one 16-byte load, they would miss store
  // forwarding once per block.
  return _mm_setr_epi32(static_cast<int>(u[0] & kLow6),
                        static_cast<int>((u[2] & kLow4) | (((u[0] >> 6) & kLow2) << 4)),
                        static_cast<int>(u[1] & kLow6),
                        static_cast<int>(((u[2] >> 4) & kLow4) | (((u[1] >> 6) & kLow2) << 4)));
}

// A Q3_K block's 16 signed scales (q3_k_scale's values) with ggml's 32-bit
// masks, as int8.
inline __m128i q3_k_scales(const uint8_t* packed) {
  constexpr uint32_t kLow4 = 0x0f0f0f0f, kLow2 = 0x03030303;
  uint32_t a[3];
  std::memcpy(a, packed, 12);
  // From general registers, as in q4_k_scales_mins.
  const __m128i v =
      _mm_setr_epi32(static_cast<int>((a[0] & kLow4) | ((a[2] & kLow2) << 4)),
                     static_cast<int>((a[1] & kLow4) | (((a[2] >> 2) & kLow2) << 4)),
                     static_cast<int>(((a[0] >> 4) & kLow4) | (((a[2] >> 4) & kLow2) << 4)),
                     static_cast<int>(((a[1] >> 4) & kLow4) | (((a[2] >> 6) & kLow2) << 4)));
  return _mm_sub_epi8(v, _mm_set1_epi8(32));
}

}  // namespace llama::detail
