// f16 <-> f32 by bit manipulation (portable, exact, no F16C needed): the same
// values as the F16C instructions ggml uses on x86 (vcvtph2ps, vcvtps2ph with
// round to nearest even). The whole-row conversions are in x86/half_rows.cpp.
#include "llama/kernels/numbers/half.hpp"

namespace llama {

float f16_to_f32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  const uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000 | (mant << 13) | (mant != 0 ? 0x400000u : 0);  // inf; NaN quiet
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  } else if (mant == 0) {
    bits = sign;  // +-0
  } else {
    // Subnormal: normalise. Value = mant * 2^-24.
    int e = -1;
    do {
      ++e;
      mant <<= 1;
    } while ((mant & 0x400) == 0);
    bits = sign | static_cast<uint32_t>(112 - e) << 23 | ((mant & 0x3ff) << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

uint16_t f32_to_f16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  const auto sign = static_cast<uint16_t>((u >> 16) & 0x8000);
  const uint32_t abs = u & 0x7fffffff;
  if (abs > 0x7f800000) return static_cast<uint16_t>(sign | 0x7e00 | ((abs >> 13) & 0x3ff));
  if (abs >= 0x477ff000) return static_cast<uint16_t>(sign | 0x7c00);  // rounds past 65504: inf
  if (abs < 0x38800000) {
    // Result subnormal (or zero): value / 2^-24 rounded to nearest even.
    if (abs < 0x33000000) return sign;  // below half the smallest subnormal: 0
    const uint32_t e = abs >> 23;
    const uint32_t mant = (abs & 0x7fffff) | 0x800000;
    const uint32_t shift = 126 - e;  // 14..24 bits of the 24-bit significand go
    const uint32_t kept = mant >> shift;
    const uint32_t rest = mant & ((1u << shift) - 1);
    const uint32_t half = 1u << (shift - 1);
    const uint32_t r = kept + ((rest > half || (rest == half && (kept & 1))) ? 1 : 0);
    return static_cast<uint16_t>(sign | r);
  }
  // Normal: re-bias the exponent, round the 13 dropped bits to nearest even
  // (a carry into the exponent is the right answer, up to infinity).
  const uint32_t r = abs - 0x38000000;  // exponent bias 127 -> 15
  const uint32_t rounded = r + 0xfff + ((r >> 13) & 1);
  return static_cast<uint16_t>(sign | (rounded >> 13));
}

}  // namespace llama
