// K-quant products with q8_K activations (kernels/products/gguf_kquant.hpp):
// the quantizer against hand-checked blocks and across SIMD levels, the dot
// products against a plain integer loop (exactly, where the float steps are
// exact) and within rounding of the exact sum, the VNNI kernels against the
// portable ones bit for bit, and the batch against one vector at a time.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <type_traits>

#include "llama/error.hpp"
#include "llama/kernels/dispatch/kernel_set.hpp"
#include "llama/kernels/numbers/gguf_blocks.hpp"
#include "llama/kernels/numbers/half.hpp"
#include "llama/kernels/products/gguf_kquant.hpp"
#include "test_support.hpp"

using llama::BlockKind;
using llama::BlockMatrix;

namespace {

struct Q8K {
  std::vector<int8_t> values;  // i8 [n]
  std::vector<float> d;        // f32 [n / 256]
};

Q8K quantize(const std::vector<float>& x, llama::SimdLevel level = llama::SimdLevel::portable) {
  Q8K q{std::vector<int8_t>(x.size()), std::vector<float>(x.size() / 256)};
  llama::quantize_activations_q8_k(x, q.values, q.d, level);
  return q;
}

// Random K-quant blocks: random bytes, f16 scales of moderate size (the scale
// bytes random too, so every 6-bit scale and min and every sign occurs).
std::vector<std::byte> random_blocks(BlockKind kind, int64_t rows, int64_t cols, uint32_t seed,
                                     float scale = 1.0f) {
  const BlockMatrix shape{{}, rows, cols, kind};
  std::vector<std::byte> b(static_cast<size_t>(rows * shape.row_bytes()));
  std::mt19937 rng(seed);
  for (auto& x : b) x = static_cast<std::byte>(rng());
  auto put = [&](size_t at) {
    const uint16_t h = llama::f32_to_f16(
        scale * std::ldexp(static_cast<float>(rng() % 1000 + 1), -12) * (rng() % 2 ? 1.0f : -1.0f));
    std::memcpy(b.data() + at, &h, 2);
  };
  const int64_t bb = llama::block_bytes(kind);
  for (size_t at = 0; at < b.size(); at += static_cast<size_t>(bb)) {
    if (kind != BlockKind::q6_k) {
      put(at);
      put(at + 2);
    } else {
      put(at + 208);
    }
  }
  return b;
}

std::vector<float> random_vector(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = dist(rng);
  return v;
}

// A weight block's integer codes and scales: value = d * scale[s] * code -
// dmin * min[s] (Q4_K, sub-blocks of 32) or d * scale[s] * code (Q6_K, codes
// - 32, sub-blocks of 16), from the dequantization's layout.
struct IntBlock {
  int32_t code[256];
  int32_t scale[16];
  int32_t min[16] = {};
  float d, dmin = 0;
  int per;  // values per sub-block
};

// Q4_K and Q5_K: the same scales, mins and nibbles; Q5_K's fifth bit from qh.
template <typename Block>
IntBlock int_block_4_5(const std::byte* p) {
  IntBlock o{};
  Block b;
  std::memcpy(&b, p, sizeof b);
  o.per = 32;
  o.d = llama::f16_to_f32(b.d);
  o.dmin = llama::f16_to_f32(b.dmin);
  for (int s = 0; s < 8; ++s) {
    uint8_t sc, m;
    llama::q4_k_scale_min(b.scales, s, sc, m);
    o.scale[s] = sc;
    o.min[s] = m;
  }
  for (int j = 0; j < 4; ++j) {
    for (int i = 0; i < 32; ++i) {
      o.code[64 * j + i] = b.qs[32 * j + i] & 15;
      o.code[64 * j + 32 + i] = b.qs[32 * j + i] >> 4;
      if constexpr (std::is_same_v<Block, llama::BlockQ5_K>) {
        o.code[64 * j + i] += 16 * ((b.qh[i] >> (2 * j)) & 1);
        o.code[64 * j + 32 + i] += 16 * ((b.qh[i] >> (2 * j + 1)) & 1);
      }
    }
  }
  return o;
}

IntBlock int_block(BlockKind kind, const std::byte* p) {
  if (kind == BlockKind::q4_k) return int_block_4_5<llama::BlockQ4_K>(p);
  if (kind == BlockKind::q5_k) return int_block_4_5<llama::BlockQ5_K>(p);
  IntBlock o{};
  llama::BlockQ6_K b;
  std::memcpy(&b, p, sizeof b);
  o.per = 16;
  o.d = llama::f16_to_f32(b.d);
  for (int s = 0; s < 16; ++s) o.scale[s] = b.scales[s];
  for (int h = 0; h < 2; ++h) {
    for (int i = 0; i < 32; ++i) {
      const uint8_t* ql = b.ql + 64 * h;
      const int qh = b.qh[32 * h + i];
      o.code[128 * h + i] = ((ql[i] & 15) | ((qh & 3) << 4)) - 32;
      o.code[128 * h + 32 + i] = ((ql[i + 32] & 15) | (((qh >> 2) & 3) << 4)) - 32;
      o.code[128 * h + 64 + i] = ((ql[i] >> 4) | (((qh >> 4) & 3) << 4)) - 32;
      o.code[128 * h + 96 + i] = ((ql[i + 32] >> 4) | (((qh >> 6) & 3) << 4)) - 32;
    }
  }
  return o;
}

// A row's product as plain integer sums per block, combined in double: the
// exact value of the definition's terms.
double int_loop_dot(BlockKind kind, const std::byte* row, int64_t cols, const Q8K& x,
                    double* magnitude) {
  double sum = 0, mag = 0;
  for (int64_t b = 0; b < cols / 256; ++b) {
    const IntBlock w = int_block(kind, row + b * llama::block_bytes(kind));
    int64_t scaled = 0, mins = 0;
    for (int j = 0; j < 256; ++j) {
      const int32_t q = x.values[static_cast<size_t>(256 * b + j)];
      scaled += int64_t{w.scale[j / w.per]} * w.code[j] * q;
      mins += int64_t{w.min[j / w.per]} * q;
    }
    const double d8 = x.d[static_cast<size_t>(b)];
    sum += d8 * w.d * static_cast<double>(scaled) - d8 * w.dmin * static_cast<double>(mins);
    mag += std::fabs(d8 * w.d * static_cast<double>(scaled)) +
           std::fabs(d8 * w.dmin * static_cast<double>(mins));
  }
  *magnitude = mag;
  return sum;
}

std::vector<llama::KernelSet> kernel_sets() {
  return llama::test::runnable_kernel_sets("q8_K products");
}

}  // namespace

TEST_CASE("q8_K: blocks quantize as ggml's quantize_row_q8_K", "[gguf][kernels][q8k]") {
  // Hand-checked: the first largest |x| is -2 (x[3]; x[10] = 2 ties later),
  // so iscale = -127 / -2 = 63.5: 1 -> 63.5 -> 64 (half to even), 0.5 ->
  // 31.75 -> 32, -1 -> -64, 2 -> 127, -2 -> -127; d = 1 / 63.5.
  std::vector<float> x(256, 0.0f);
  x[3] = -2.0f;
  x[10] = 2.0f;
  x[20] = 1.0f;
  x[21] = 0.5f;
  x[40] = -1.0f;
  x[41] = 2.5f / 63.5f;  // 2.5 in the product up to rounding
  // A positive maximum gives a negative d: 4 -> -127, 1 -> -31.75 -> -32.
  std::vector<float> y(256, 0.0f);
  y[0] = 4.0f;
  y[1] = 1.0f;
  y[2] = -4.0f;
  for (llama::SimdLevel level : llama::kSimdLevels) {
    INFO(llama::to_string(level));
    const Q8K q = quantize(x, level);
    CHECK(q.d[0] == 1 / 63.5f);
    CHECK(q.values[3] == -127);
    CHECK(q.values[10] == 127);
    CHECK(q.values[20] == 64);
    CHECK(q.values[21] == 32);
    CHECK(q.values[40] == -64);
    CHECK(q.values[41] == static_cast<int8_t>(std::nearbyint(63.5f * x[41])));
    CHECK(q.values[0] == 0);
    const Q8K p = quantize(y, level);
    CHECK(p.d[0] == 1 / (-127.f / 4.0f));
    CHECK(p.d[0] < 0);
    CHECK(p.values[0] == -127);
    CHECK(p.values[1] == -32);
    CHECK(p.values[2] == 127);
    // A block of zeros: d 0, values 0; a NaN is passed over for the maximum
    // and becomes 0.
    const Q8K z = quantize(std::vector<float>(256, 0.0f), level);
    CHECK(z.d[0] == 0.0f);
    CHECK(std::all_of(z.values.begin(), z.values.end(), [](int8_t v) { return v == 0; }));
    std::vector<float> n = y;
    n[5] = std::numeric_limits<float>::quiet_NaN();
    const Q8K qn = quantize(n, level);
    CHECK(qn.d[0] == p.d[0]);
    CHECK(qn.values[5] == 0);
  }
}

TEST_CASE("q8_K: every SIMD level quantizes with the portable bits", "[gguf][kernels][q8k]") {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    std::vector<float> x = random_vector(256 * 8, seed);
    for (size_t i = 0; i < x.size(); i += 37) x[i] *= 100.0f;  // outliers set the scale
    for (size_t i = 0; i < 256; ++i) x[i] = 0.0f;              // a block of zeros
    x[300] = -x[301];                                          // ties of |x|
    const uint32_t nan_bits[] = {0x7FC00123u, 0xFFC0ABCDu};    // NaNs with payloads
    std::memcpy(&x[500], &nan_bits[0], 4);
    std::memcpy(&x[700], &nan_bits[1], 4);
    const Q8K portable = quantize(x);
    for (llama::SimdLevel level : llama::kSimdLevels) {
      if (!llama::simd_level_supported(level)) {
        WARN("this CPU does not run " << llama::to_string(level) << ": not compared");
        continue;
      }
      const Q8K q = quantize(x, level);
      CHECK(q.values == portable.values);
      REQUIRE(q.d.size() == portable.d.size());
      CHECK(std::memcmp(q.d.data(), portable.d.data(), q.d.size() * 4) == 0);
    }
  }
  std::vector<int8_t> v(256);
  std::vector<float> d(2);
  CHECK_THROWS_AS(llama::quantize_activations_q8_k(std::vector<float>(256), v, d), llama::Error);
}

TEST_CASE("q8_K products: exactly the integer loop where the float steps are exact",
          "[gguf][kernels][q8k]") {
  // Weights with d = dmin = 1 and x's d a power of two: every product and sum
  // of the definition is an exact float, so the result is the integer loop's.
  for (BlockKind kind : {BlockKind::q4_k, BlockKind::q5_k, BlockKind::q6_k}) {
    INFO(llama::to_string(kind));
    auto bytes = random_blocks(kind, 3, 512, 7);
    const uint16_t one = llama::f32_to_f16(1.0f);
    for (size_t at = 0; at < bytes.size(); at += static_cast<size_t>(llama::block_bytes(kind))) {
      if (kind != BlockKind::q6_k) {
        std::memcpy(bytes.data() + at, &one, 2);
        std::memcpy(bytes.data() + at + 2, &one, 2);
      } else {
        std::memcpy(bytes.data() + at + 208, &one, 2);
      }
    }
    const BlockMatrix w{bytes, 3, 512, kind};
    std::vector<float> xf(512);
    for (size_t i = 0; i < xf.size(); ++i)
      xf[i] = static_cast<float>(static_cast<int>(i % 255) - 127);
    const Q8K x = quantize(xf);
    REQUIRE(x.d[0] == 1.0f);  // max -127 at index 0: iscale 1
    for (llama::KernelSet k : kernel_sets()) {
      std::vector<float> out(3);
      llama::kquant_q8_k_matvec_rows(out, w, {x.values, x.d, 256}, 0, 3, k);
      for (int64_t r = 0; r < 3; ++r) {
        double mag;
        CHECK(out[static_cast<size_t>(r)] ==
              static_cast<float>(int_loop_dot(kind, w.row(r), 512, x, &mag)));
      }
    }
  }
}

TEST_CASE("q8_K products: within rounding of the exact sum, every kernel set the portable bits",
          "[gguf][kernels][q8k]") {
  const std::vector<llama::KernelSet> kernels = kernel_sets();
  for (BlockKind kind : {BlockKind::q4_k, BlockKind::q5_k, BlockKind::q6_k}) {
    INFO(llama::to_string(kind));
    constexpr int64_t rows = 37, cols = 256 * 6, n = 11;
    const auto bytes = random_blocks(kind, rows, cols, 11);
    const BlockMatrix w{bytes, rows, cols, kind};
    const std::vector<float> xf = random_vector(n * cols, 5);
    const Q8K x = quantize(xf);
    std::vector<std::vector<float>> decode(n, std::vector<float>(rows));
    for (int64_t t = 0; t < n; ++t) {
      const llama::Q8View v{
          {x.values.data() + t * cols, cols}, {x.d.data() + t * cols / 256, cols / 256}, 256};
      llama::kquant_q8_k_matvec_rows(decode[t], w, v, 0, rows, llama::KernelSet::portable);
      Q8K one{{x.values.begin() + t * cols, x.values.begin() + (t + 1) * cols},
              {x.d.begin() + t * cols / 256, x.d.begin() + (t + 1) * cols / 256}};
      for (int64_t r = 0; r < rows; ++r) {
        double mag;
        const double exact = int_loop_dot(kind, w.row(r), cols, one, &mag);
        CHECK(std::fabs(decode[t][r] - exact) <= 64 * 6e-8 * mag);
      }
    }
    for (llama::KernelSet k : kernels) {
      INFO(llama::to_string(k));
      for (int64_t t = 0; t < n; ++t) {
        // Decode over an odd row range: each row the bits of the whole range's.
        const llama::Q8View v{
            {x.values.data() + t * cols, cols}, {x.d.data() + t * cols / 256, cols / 256}, 256};
        std::vector<float> out(rows - 3);
        llama::kquant_q8_k_matvec_rows(out, w, v, 3, rows, k);
        for (int64_t r = 3; r < rows; ++r) CHECK(out[r - 3] == decode[t][r]);
      }
      for (int64_t m = 1; m <= n; ++m) {  // batches of 1..11 vectors: passes of 8 and the rest
        const llama::Q8BatchView b{{x.values.data(), static_cast<size_t>(m * cols)},
                                   {x.d.data(), static_cast<size_t>(m * cols / 256)},
                                   cols,
                                   256};
        std::vector<float> out(static_cast<size_t>(m * rows), -1.0f);
        llama::kquant_q8_k_matmat_rows(out, rows, w, b, 2, rows - 1, k);
        for (int64_t t = 0; t < m; ++t) {
          for (int64_t r = 2; r < rows - 1; ++r) CHECK(out[t * rows + r] == decode[t][r]);
        }
      }
    }
  }
}

TEST_CASE("q8_K products: other weights and mismatched inputs are refused",
          "[gguf][kernels][q8k]") {
  const auto bytes = random_blocks(BlockKind::q4_k, 2, 256, 3);
  const BlockMatrix w{bytes, 2, 256, BlockKind::q4_k};
  std::vector<int8_t> v(512);
  std::vector<float> d(2), out(2);
  CHECK_THROWS_AS(
      llama::kquant_q8_k_matvec_rows(out, w, {v, d, 256}, 0, 2, llama::KernelSet::portable),
      llama::Error);
  CHECK_THROWS_AS(
      llama::kquant_q8_k_matvec_rows(out, w, {std::span(v).first(256), std::span(d).first(1), 32},
                                     0, 2, llama::KernelSet::portable),
      llama::Error);
  const BlockMatrix q40{std::span(bytes).first(36), 2, 32, BlockKind::q4_0};
  CHECK_THROWS_AS(
      llama::kquant_q8_k_matvec_rows(out, q40, {std::span(v).first(32), std::span(d).first(1), 32},
                                     0, 2, llama::KernelSet::portable),
      llama::Error);
}
