// f16 and bf16 widening (kernels/half.hpp, kernels/x86/half_rows.cpp): the
// scalar f16 conversion against IEEE arithmetic for all 65536 inputs, and the
// row conversions of every SIMD level this CPU runs against the scalar ones,
// bit for bit, for all 65536 inputs (subnormals, infinities, NaN payloads),
// over lengths and offsets that leave every tail. The output names the levels
// run and those the CPU lacks (never counted passed).
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "llama/error.hpp"
#include "llama/kernels/dispatch/cpu_features.hpp"
#include "llama/kernels/numbers/half.hpp"
#include "test_support.hpp"

using namespace llama;

namespace {

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

// u16 [65536]: every bit pattern once, in order.
std::vector<uint16_t> every_half() {
  std::vector<uint16_t> all(65536);
  for (uint32_t i = 0; i < all.size(); ++i) all[i] = static_cast<uint16_t>(i);
  return all;
}

// The f32 bits an f16 means, from its fields by IEEE arithmetic (an
// independent definition of f16_to_f32's): a NaN keeps its payload, quieted.
uint32_t f16_meaning(uint16_t h) {
  const bool negative = (h & 0x8000) != 0;
  const int exp = (h >> 10) & 0x1f;
  const int mant = h & 0x3ff;
  if (exp == 0x1f) {
    if (mant == 0) return negative ? 0xff800000u : 0x7f800000u;
    return (negative ? 0x80000000u : 0u) | 0x7fc00000u | (static_cast<uint32_t>(mant) << 13);
  }
  const double v = exp == 0 ? std::ldexp(mant, -24) : std::ldexp(1024 + mant, exp - 25);
  return bits_of(static_cast<float>(negative ? -v : v));
}

using RowsAt = void (*)(SimdLevel, std::span<const uint16_t>, std::span<float>);

// Converts `in` at `level` in pieces of every length 0..70 from every offset
// of a 64-byte line, then whole, and compares each value's bits with `want`.
void check_rows(RowsAt rows, SimdLevel level, const std::vector<uint16_t>& in,
                const std::vector<uint32_t>& want) {
  std::vector<float> out(in.size() + 64);
  rows(level, in, std::span(out).first(in.size()));
  size_t differ = 0;
  for (size_t i = 0; i < in.size(); ++i) differ += bits_of(out[i]) != want[i];
  CHECK(differ == 0);
  // Short pieces: every tail length at several alignments, nothing written
  // past the piece (the values after it keep their marker).
  const float marker = -1234.5f;
  size_t at = 1000;
  for (size_t len = 0; len <= 70; ++len) {
    for (size_t skew = 0; skew < 32; skew += 7, at += 101) {
      const size_t first = (at % (in.size() - 200)) + skew;
      std::fill(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(len + 16), marker);
      rows(level, std::span(in).subspan(first, len), std::span(out).first(len));
      for (size_t i = 0; i < len; ++i) {
        INFO("length " << len << ", input " << first + i);
        CHECK(bits_of(out[i]) == want[first + i]);
      }
      for (size_t i = len; i < len + 16; ++i) CHECK(out[i] == marker);
    }
  }
}

}  // namespace

TEST_CASE("f16_to_f32 gives every f16's IEEE value (NaN payloads quieted)", "[half][convert]") {
  for (uint32_t i = 0; i < 65536; ++i) {
    const auto h = static_cast<uint16_t>(i);
    INFO("f16 0x" << std::hex << i);
    REQUIRE(bits_of(f16_to_f32(h)) == f16_meaning(h));
  }
  // Round trip: every non-NaN f16 back from its f32 unchanged.
  for (uint32_t i = 0; i < 65536; ++i) {
    const auto h = static_cast<uint16_t>(i);
    if (std::isnan(f16_to_f32(h))) continue;
    REQUIRE(f32_to_f16(f16_to_f32(h)) == h);
  }
}

TEST_CASE("row widening of f16 and bf16 matches the scalar bits at every level",
          "[half][convert]") {
  const std::vector<uint16_t> all = every_half();
  std::vector<uint32_t> f16_want(all.size()), bf16_want(all.size());
  for (size_t i = 0; i < all.size(); ++i) {
    f16_want[i] = bits_of(f16_to_f32(all[i]));
    bf16_want[i] = static_cast<uint32_t>(all[i]) << 16;
    REQUIRE(bits_of(bf16_to_f32(all[i])) == bf16_want[i]);
  }
  for (SimdLevel level : test::runnable_levels("f16/bf16 row widening")) {
    INFO("level " << to_string(level));
    check_rows(&f16_to_f32_at_level, level, all, f16_want);
    check_rows(&bf16_to_f32_at_level, level, all, bf16_want);
  }
  // The dispatched entry points (simd_level()) too.
  std::vector<float> out(all.size());
  f16_to_f32(all, out);
  for (size_t i = 0; i < all.size(); ++i) REQUIRE(bits_of(out[i]) == f16_want[i]);
  bf16_to_f32(all, out);
  for (size_t i = 0; i < all.size(); ++i) REQUIRE(bits_of(out[i]) == bf16_want[i]);
}

TEST_CASE("row widening refuses an output shorter than its input", "[half][convert]") {
  const std::vector<uint16_t> in(40, 0x3c00);
  std::vector<float> out(39);
  CHECK_THROWS_WITH(f16_to_f32(in, out), Catch::Contains("40 values into 39 floats"));
  CHECK_THROWS_WITH(bf16_to_f32_at_level(SimdLevel::portable, in, out),
                    Catch::Contains("bf16_to_f32: 40 values into 39 floats"));
}
