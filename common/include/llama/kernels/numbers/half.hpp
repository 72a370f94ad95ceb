// IEEE half (f16) and bfloat16 conversions, bit-exact with ggml's
// GGML_FP16_TO_FP32 / GGML_FP32_TO_FP16 (F16C's round to nearest even) and
// GGML_BF16_TO_FP32 / GGML_FP32_TO_BF16 (round to nearest even, NaN kept quiet).
// Widening is exact; narrowing rounds once.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>

#include "llama/kernels/dispatch/cpu_features.hpp"

namespace llama {

inline float bf16_to_f32(uint16_t h) {
  const uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

inline uint16_t f32_to_bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  if ((u & 0x7fffffff) > 0x7f800000) return static_cast<uint16_t>((u >> 16) | 64);  // quiet NaN
  return static_cast<uint16_t>((u + (0x7fff + ((u >> 16) & 1))) >> 16);
}

// Exact: every f16 (subnormals, infinities and NaN payloads included) is an f32.
float f16_to_f32(uint16_t h);
// Round to nearest even; overflow gives infinity, NaN stays NaN (quiet).
uint16_t f32_to_f16(float f);

// Whole rows, out[i] = the conversion of in[i] (u16 [n] -> f32 [n]), at
// simd_level() (kernels/x86/half_rows.cpp): AVX-512 and AVX2+F16C widen 16 or 8
// values a step, portable runs the scalar conversions above; every level
// gives the same bits for every input. Throws Error if `out` is shorter than
// `in`.
void f16_to_f32(std::span<const uint16_t> in, std::span<float> out);
void bf16_to_f32(std::span<const uint16_t> in, std::span<float> out);
// The same at `level` (tests, benchmarks); a level this CPU lacks runs the
// best one below it (runnable_level).
void f16_to_f32_at_level(SimdLevel level, std::span<const uint16_t> in, std::span<float> out);
void bf16_to_f32_at_level(SimdLevel level, std::span<const uint16_t> in, std::span<float> out);

// out[i] = f16(in[i]), round to nearest even, at simd_level()
// (kernels/x86/half_rows.cpp: F16C's vcvtps2ph where the CPU has it,
// f32_to_f16 elsewhere: the same bits).
void round_to_f16(const float* in, uint16_t* out, int64_t n);
void round_to_f16_at_level(SimdLevel level, const float* in, uint16_t* out, int64_t n);

}  // namespace llama
