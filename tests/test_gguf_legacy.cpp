// GGUF's Q5_0, Q4_1 and Q5_1 blocks: values against ggml's dequantize_row_*
// written out by hand, q8_1 activations as quantize_row_q8_1, and the
// products against a plain integer loop in llama.cpp's AVX2 order, the batch
// equal to one vector at a time bit for bit.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "llama/error.hpp"
#include "llama/kernels/numbers/half.hpp"
#include "llama/kernels/numbers/legacy_blocks.hpp"
#include "llama/kernels/products/legacy_products.hpp"
#include "test_support.hpp"

using namespace llama;

namespace {

// rows x cols of `kind`'s blocks with random codes and small f16 scales and mins.
std::vector<std::byte> random_rows(BlockKind kind, int64_t rows, int64_t cols, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::byte> b(static_cast<size_t>(rows * cols / 32 * block_bytes(kind)));
  for (auto& x : b) x = static_cast<std::byte>(rng());
  const auto half = [&](size_t at) {
    const uint16_t h = f32_to_f16(static_cast<float>(rng() % 2000) / 40000.0f - 0.025f);
    std::memcpy(b.data() + at, &h, 2);
  };
  for (size_t at = 0; at < b.size(); at += static_cast<size_t>(block_bytes(kind))) {
    half(at);
    if (kind != BlockKind::q5_0) half(at + 2);
  }
  return b;
}

// f32 [n] uniform in [-2, 2): test_support's random_floats.
std::vector<float> random_vector(int64_t n, uint32_t seed) {
  return llama::test::random_floats(static_cast<size_t>(n), seed, 2.0f);
}

struct Input {
  std::vector<int8_t> values;
  std::vector<float> scales;
  int64_t group = 0;
  Q8View view() const { return {values, scales, group}; }
};

Input quantized(BlockKind kind, const std::vector<float>& x) {
  Input in;
  in.values.resize(x.size());
  if (kind == BlockKind::q5_0) {
    in.group = 32;
    in.scales.resize(x.size() / 32);
    quantize_activations_q8_0_blocks(x, in.values, in.scales);
  } else {
    in.group = kQ8_1ScaleGroup;
    in.scales.resize(x.size() / 16);
    quantize_activations_q8_1_blocks(x, in.values, in.scales);
  }
  return in;
}

// ggml's AVX2 vec_dot for one row, as plain integer loops: eight int32 lanes
// per block, acc[l] = fma(lane, d_w * d_x, acc[l]), hsum_float_8, + summs.
float plain_dot(BlockKind kind, const std::byte* row, const Input& x, int64_t blocks) {
  float acc[8] = {}, summs = 0.0f;
  const int64_t step = block_bytes(kind);
  for (int64_t b = 0; b < blocks; ++b) {
    const std::byte* blk = row + b * step;
    uint16_t d, m = 0;
    std::memcpy(&d, blk, 2);
    if (kind != BlockKind::q5_0) std::memcpy(&m, blk + 2, 2);
    const uint8_t* qs =
        reinterpret_cast<const uint8_t*>(blk) + (kind == BlockKind::q4_1 ? 4 : step - 16);
    uint32_t qh = 0;
    if (kind != BlockKind::q4_1) std::memcpy(&qh, blk + (kind == BlockKind::q5_0 ? 2 : 4), 4);
    int q[32];
    for (int j = 0; j < 16; ++j) {
      q[j] = (qs[j] & 15) | (((qh >> j) & 1) << 4);
      q[j + 16] = (qs[j] >> 4) | (((qh >> (j + 16)) & 1) << 4);
      if (kind == BlockKind::q5_0) q[j] -= 16, q[j + 16] -= 16;
    }
    const int per = kind == BlockKind::q5_0 ? 1 : 2;
    const float dd = f16_to_f32(d) * x.scales[b * per];
    for (int l = 0; l < 8; ++l) {
      int lane = 0;
      for (int j = 4 * l; j < 4 * l + 4; ++j) lane += q[j] * x.values[b * 32 + j];
      acc[l] = std::fma(static_cast<float>(lane), dd, acc[l]);
    }
    if (kind != BlockKind::q5_0) summs += f16_to_f32(m) * x.scales[b * 2 + 1];
  }
  const float s = ((acc[0] + acc[4]) + (acc[2] + acc[6])) + ((acc[1] + acc[5]) + (acc[3] + acc[7]));
  return kind == BlockKind::q5_0 ? s : s + summs;
}

}  // namespace

TEST_CASE("legacy blocks: values are ggml's dequantize_row_q5_0/q4_1/q5_1", "[gguf][kernels]") {
  // One hand-built block of each: scale 0.5 (f16 0x3800), min -1.25 (0xBD00).
  BlockQ5_0 q50{};
  BlockQ4_1 q41{};
  BlockQ5_1 q51{};
  q50.d = q41.d = q51.d = 0x3800;
  q41.m = q51.m = 0xBD00;
  const uint32_t qh = 0xA5C3'0F01u;
  std::memcpy(q50.qh, &qh, 4);
  std::memcpy(q51.qh, &qh, 4);
  for (int j = 0; j < 16; ++j) {
    q50.qs[j] = q41.qs[j] = q51.qs[j] = static_cast<uint8_t>(j * 17 + 3);
  }
  std::vector<float> v50(32), v41(32), v51(32);
  dequantize_q5_0({&q50, 1}, v50);
  dequantize_q4_1({&q41, 1}, v41);
  dequantize_q5_1({&q51, 1}, v51);
  for (int j = 0; j < 16; ++j) {
    // ggml-quants.c: xh_0 = ((qh >> j) << 4) & 0x10, xh_1 = (qh >> (j + 12)) & 0x10.
    const int xh0 = static_cast<int>(((qh >> j) << 4) & 0x10);
    const int xh1 = static_cast<int>((qh >> (j + 12)) & 0x10);
    const int lo = q50.qs[j] & 0x0F, hi = q50.qs[j] >> 4;
    CHECK(v50[j] == static_cast<float>((lo | xh0) - 16) * 0.5f);
    CHECK(v50[j + 16] == static_cast<float>((hi | xh1) - 16) * 0.5f);
    CHECK(v41[j] == static_cast<float>(lo) * 0.5f - 1.25f);
    CHECK(v41[j + 16] == static_cast<float>(hi) * 0.5f - 1.25f);
    CHECK(v51[j] == static_cast<float>(lo | xh0) * 0.5f - 1.25f);
    CHECK(v51[j + 16] == static_cast<float>(hi | xh1) * 0.5f - 1.25f);
  }
}

TEST_CASE("legacy blocks: every SIMD level quantizes q8_1 with the portable bits",
          "[gguf][kernels]") {
  const auto levels = test::runnable_levels("q8_1 quantizer");
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    std::vector<float> x = random_vector(32 * 24, seed);
    for (size_t i = 0; i < x.size(); i += 37) x[i] *= 100.0f;  // outliers set the scale
    for (size_t i = 0; i < 32; ++i) x[i] = 0.0f;               // a block of zeros
    for (size_t i = 64; i < 96; ++i) x[i] *= 1e-6f;            // tiny: s a subnormal f16
    x[100] = std::numeric_limits<float>::quiet_NaN();          // passed over for amax
    x[200] = -x[201];                                          // ties of |x|
    std::vector<int8_t> want(x.size()), got(x.size());
    std::vector<float> want_s(x.size() / 16), got_s(x.size() / 16);
    quantize_activations_q8_1_blocks(x, want, want_s, SimdLevel::portable);
    for (const SimdLevel level : levels) {
      INFO(to_string(level) << " seed " << seed);
      quantize_activations_q8_1_blocks(x, got, got_s, level);
      CHECK(got == want);
      CHECK(std::memcmp(got_s.data(), want_s.data(), got_s.size() * 4) == 0);
    }
  }
}

TEST_CASE("legacy blocks: q8_1 activations are quantize_row_q8_1's", "[gguf][kernels]") {
  std::vector<float> x(64);
  for (int j = 0; j < 64; ++j) x[j] = 0.013f * static_cast<float>(j - 20);
  for (SimdLevel level : kSimdLevels) {
    if (!simd_level_supported(level)) {
      WARN("this CPU does not run the " << to_string(level) << " level: not tested");
      continue;
    }
    INFO(to_string(level));
    std::vector<int8_t> v(64), v0(64);
    std::vector<float> s(4), s0(2);
    quantize_activations_q8_1_blocks(x, v, s, level);
    quantize_activations_q8_0_blocks(x, v0, s0, level);
    CHECK(v == v0);  // the values and d are q8_0's
    CHECK(s[0] == s0[0]);
    CHECK(s[2] == s0[1]);
    for (int b = 0; b < 2; ++b) {
      float amax = 0;
      int sum = 0;
      for (int j = 0; j < 32; ++j) {
        amax = std::max(amax, std::fabs(x[b * 32 + j]));
        sum += v[b * 32 + j];
      }
      // s from d before its f16 rounding.
      CHECK(s[2 * b + 1] == f16_to_f32(f32_to_f16(amax / 127.f * static_cast<float>(sum))));
    }
  }
  std::vector<int8_t> v(40);
  std::vector<float> s(2), x40(40);
  CHECK_THROWS_WITH(quantize_activations_q8_1_blocks(x40, v, s),
                    Catch::Contains("do not match blocks of 32"));
}

TEST_CASE("legacy blocks: products are llama.cpp's AVX2 vec_dot, the batch decode's bits",
          "[gguf][kernels]") {
  for (BlockKind kind : {BlockKind::q5_0, BlockKind::q4_1, BlockKind::q5_1}) {
    for (const int64_t cols : {32, 352, 1024}) {
      INFO(to_string(kind) << " cols " << cols);
      const int64_t rows = 70;  // two 64-row tiles in the batch
      const auto bytes = random_rows(kind, rows, cols, static_cast<uint32_t>(cols));
      const BlockMatrix w{bytes, rows, cols, kind};
      check_block_matrix(w, "w");
      const int64_t tokens = 5;
      std::vector<Input> xs;
      std::vector<int8_t> bv;
      std::vector<float> bs;
      for (int64_t t = 0; t < tokens; ++t) {
        xs.push_back(quantized(kind, random_vector(cols, static_cast<uint32_t>(7 + t))));
        bv.insert(bv.end(), xs.back().values.begin(), xs.back().values.end());
        bs.insert(bs.end(), xs.back().scales.begin(), xs.back().scales.end());
      }
      std::vector<float> batch(static_cast<size_t>(tokens * rows), -1.0f);
      legacy_blocks_matmat_rows(batch, rows, w, {bv, bs, cols, xs[0].group}, 2, rows,
                                KernelSet::portable);
      for (int64_t t = 0; t < tokens; ++t) {
        std::vector<float> one(static_cast<size_t>(rows - 2));
        legacy_blocks_matvec_rows(one, w, xs[t].view(), 2, rows, KernelSet::portable);
        CHECK(std::memcmp(one.data(), batch.data() + t * rows + 2, one.size() * 4) == 0);
        CHECK(batch[t * rows + 1] == -1.0f);
        std::vector<float> dense(static_cast<size_t>(cols));
        for (int64_t r = 2; r < rows; ++r) {
          REQUIRE(one[r - 2] == plain_dot(kind, w.row(r), xs[t], cols / 32));
          // And near the exact product of the dequantized weights and x's values.
          dequantize_rows(w, r, r + 1, dense);
          double exact = 0, mass = 0;
          for (int64_t k = 0; k < cols; ++k) {
            const int64_t b = k / 32;
            const double xv =
                xs[t].values[k] * double(xs[t].scales[b * (xs[t].group == 32 ? 1 : 2)]);
            exact += double(dense[k]) * xv;
            mass += std::fabs(double(dense[k]) * xv);
          }
          // Q4_1/Q5_1's min term uses s, f16(d * sum): within 2^-11 of sum * d.
          CHECK(std::fabs(one[r - 2] - exact) <= 1e-3 * mass + 1e-6);
        }
      }
    }
  }
}

TEST_CASE("legacy blocks: every vector kernel set gives the portable bits", "[gguf][kernels]") {
  const auto kernels = test::runnable_kernel_sets("legacy block products");
  for (BlockKind kind : {BlockKind::q5_0, BlockKind::q4_1, BlockKind::q5_1}) {
    for (const int64_t cols : {32, 96, 352, 2816}) {
      INFO(to_string(kind) << " cols " << cols);
      const int64_t rows = 37;
      const auto bytes = random_rows(kind, rows, cols, static_cast<uint32_t>(cols + 1));
      const BlockMatrix w{bytes, rows, cols, kind};
      // Activations of every magnitude, and a block of zeros.
      std::vector<float> xf = random_vector(cols, 41);
      for (int64_t k = 0; k < cols; ++k)
        xf[k] *= std::ldexp(1.0f, static_cast<int>(k / 32 % 9) - 4);
      for (int64_t k = 0; k < 32; ++k) xf[k] = 0.0f;
      const Input x = quantized(kind, xf);
      std::vector<float> a(rows), b(rows), c(rows - 4);
      legacy_blocks_matvec_rows(a, w, x.view(), 0, rows, KernelSet::portable);
      for (const KernelSet kernel : kernels) {
        INFO(to_string(kernel));
        legacy_blocks_matvec_rows(b, w, x.view(), 0, rows, kernel);
        CHECK(std::memcmp(a.data(), b.data(), a.size() * 4) == 0);
        legacy_blocks_matvec_rows(c, w, x.view(), 3, rows - 1, kernel);
        CHECK(std::memcmp(a.data() + 3, c.data(), c.size() * 4) == 0);
        // The batch through the same kernel.
        std::vector<float> batch(static_cast<size_t>(rows), -1.0f);
        legacy_blocks_matmat_rows(batch, rows, w, {x.values, x.scales, cols, x.group}, 0, rows,
                                  kernel);
        CHECK(std::memcmp(a.data(), batch.data(), a.size() * 4) == 0);
      }
    }
  }
}

TEST_CASE("legacy blocks: wrong inputs and kinds are refused", "[gguf][kernels]") {
  const auto bytes = random_rows(BlockKind::q4_1, 2, 64, 3);
  const BlockMatrix w{bytes, 2, 64, BlockKind::q4_1};
  const Input q80 = quantized(BlockKind::q5_0, random_vector(64, 5));
  std::vector<float> out(2);
  CHECK_THROWS_WITH(legacy_blocks_matvec_rows(out, w, q80.view(), 0, 2, KernelSet::portable),
                    "legacy block products: Q4_1 weights take q8_1-block inputs, not groups of 32");
  CHECK_THROWS_WITH(blocks_matvec_rows_f32(out, w, random_vector(64, 3), 0, 2, KernelSet::portable),
                    "f32-input block products: Q4_1 weights take quantized inputs");
  const BlockMatrix q4{bytes, 2, 64, BlockKind::q4_0};
  CHECK_THROWS_WITH(legacy_blocks_matvec_rows(out, q4, q80.view(), 0, 2, KernelSet::portable),
                    Catch::Contains("are not Q5_0, Q4_1 or Q5_1"));
}
