// Products with GGUF block weights in place: the f32-activation kernels against
// a double-precision sum of the exact dequantized weights, the Q8_0 kernels
// portable against VNNI bit for bit, the batch against one vector at a time bit
// for bit, and the activation quantization's rounding.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "llama/error.hpp"
#include "llama/kernels/numbers/gguf_blocks.hpp"
#include "llama/kernels/numbers/half.hpp"
#include "llama/kernels/products/gguf_products.hpp"
#include "test_support.hpp"

using llama::BlockKind;
using llama::BlockMatrix;

namespace {

// Random blocks with finite scales of moderate size (|d| < 2^-4).
std::vector<std::byte> random_blocks(BlockKind kind, int64_t rows, int64_t cols, uint32_t seed) {
  const BlockMatrix shape{{}, rows, cols, kind};
  std::vector<std::byte> b(static_cast<size_t>(rows * shape.row_bytes()));
  std::mt19937 rng(seed);
  for (auto& x : b) x = static_cast<std::byte>(rng());
  auto scale = [&](size_t at) {
    const uint16_t h = llama::f32_to_f16(std::ldexp(static_cast<float>(rng() % 1000 + 1), -14) *
                                         (rng() % 2 ? 1.0f : -1.0f));
    std::memcpy(b.data() + at, &h, 2);
  };
  const int64_t bb = llama::block_bytes(kind), n = static_cast<int64_t>(b.size()) / bb;
  for (int64_t i = 0; i < n; ++i) {
    const size_t at = static_cast<size_t>(i * bb);
    switch (kind) {
      case BlockKind::f16:
        scale(at);
        break;
      case BlockKind::bf16: {
        const uint16_t h = llama::f32_to_bf16(static_cast<float>(rng() % 2000) / 1000.0f - 1.0f);
        std::memcpy(b.data() + at, &h, 2);
        break;
      }
      case BlockKind::q8_0:
      case BlockKind::q4_0:
      case BlockKind::q5_0:
        scale(at);
        break;
      case BlockKind::q4_1:
      case BlockKind::q5_1:
      case BlockKind::q4_k:
      case BlockKind::q5_k:
        scale(at);
        scale(at + 2);
        break;
      case BlockKind::q6_k:
        scale(at + 208);
        break;
      case BlockKind::q3_k:
        scale(at + 108);
        break;
      case BlockKind::q2_k:
        scale(at + 80);
        scale(at + 82);
        break;
    }
  }
  return b;
}

// f32 [n] uniform in [-2, 2): test_support's random_floats.
std::vector<float> random_vector(int64_t n, uint32_t seed) {
  return llama::test::random_floats(static_cast<size_t>(n), seed, 2.0f);
}

// sum_k w[r, k] x[k] in double over the exact weights (and, in abs if given,
// sum_k |w[r, k] x[k]|: what an f32 sum's rounding error scales with).
std::vector<double> exact_products(const BlockMatrix& w, const std::vector<float>& x,
                                   std::vector<double>* abs = nullptr) {
  std::vector<float> row(static_cast<size_t>(w.cols));
  std::vector<double> y(static_cast<size_t>(w.rows));
  if (abs) abs->assign(y.size(), 0.0);
  for (int64_t r = 0; r < w.rows; ++r) {
    llama::dequantize_rows(w, r, r + 1, row);
    double s = 0;
    for (int64_t k = 0; k < w.cols; ++k) {
      s += double(row[k]) * double(x[k]);
      if (abs) (*abs)[r] += std::fabs(double(row[k]) * double(x[k]));
    }
    y[r] = s;
  }
  return y;
}

}  // namespace

TEST_CASE("block products: f32 activations give the exact weights' products", "[gguf][kernels]") {
  for (BlockKind kind : {BlockKind::f16, BlockKind::bf16}) {
    for (int64_t cols : {256, 512, 768 + 256}) {
      INFO(llama::to_string(kind) << " cols " << cols);
      const int64_t rows = 37;
      const auto bytes = random_blocks(kind, rows, cols, 7);
      const BlockMatrix w{bytes, rows, cols, kind};
      llama::check_block_matrix(w, "w");
      const auto x = random_vector(cols, 11);
      const auto want = exact_products(w, x);
      double scale = 0;
      for (double v : want) scale = std::max(scale, std::fabs(v));
      for (auto kernel : llama::test::runnable_kernel_sets("block products")) {
        std::vector<float> got(static_cast<size_t>(rows - 5), -1.0f);
        llama::blocks_matvec_rows_f32(got, w, x, 3, rows - 2, kernel);
        for (int64_t r = 3; r < rows - 2; ++r) {
          REQUIRE(std::fabs(got[r - 3] - want[r]) <= 1e-5 * scale);
        }
      }
    }
  }
  // F16 rows that are not a multiple of 256 take the tail.
  const auto bytes = random_blocks(BlockKind::f16, 3, 300, 5);
  const BlockMatrix w{bytes, 3, 300, BlockKind::f16};
  const auto x = random_vector(300, 3);
  const auto want = exact_products(w, x);
  for (auto kernel : llama::test::runnable_kernel_sets("block products")) {
    std::vector<float> got(3);
    llama::blocks_matvec_rows_f32(got, w, x, 0, 3, kernel);
    for (int r = 0; r < 3; ++r) CHECK(got[r] == Approx(want[r]).epsilon(1e-5));
  }
}

TEST_CASE("block products: a row's f32-activation product does not depend on the row range",
          "[gguf][kernels]") {
  // The AVX-512 kernel takes 4 rows per pass and single rows
  // after; every row must come out with the bits of a one-row call, so that
  // thread splits and the batch (64-row tiles) change nothing.
  for (BlockKind kind : {BlockKind::f16, BlockKind::bf16})
    for (int64_t cols : {256, 1024 + 256, 544}) {
      if (cols == 544 && kind != BlockKind::f16) continue;
      for (auto kernel : llama::test::runnable_kernel_sets("block products")) {
        INFO(llama::to_string(kind) << " cols " << cols << " " << llama::to_string(kernel));
        const int64_t rows = 37;
        const auto bytes = random_blocks(kind, rows, cols, 17);
        const BlockMatrix w{bytes, rows, cols, kind};
        const auto x = random_vector(cols, 19);
        std::vector<float> all(rows), part(rows - 4), one(1);
        llama::blocks_matvec_rows_f32(all, w, x, 0, rows, kernel);
        llama::blocks_matvec_rows_f32(part, w, x, 3, rows - 1, kernel);
        CHECK(std::memcmp(all.data() + 3, part.data(), part.size() * 4) == 0);
        for (int64_t r = 0; r < rows; ++r) {
          llama::blocks_matvec_rows_f32(one, w, x, r, r + 1, kernel);
          REQUIRE(std::memcmp(&one[0], &all[r], 4) == 0);
        }
      }
    }
}

TEST_CASE("block products: dequantize_rows is the blocks' one definition", "[gguf][kernels]") {
  const auto bytes = random_blocks(BlockKind::q4_k, 4, 512, 3);
  const BlockMatrix w{bytes, 4, 512, BlockKind::q4_k};
  std::vector<float> rows(2 * 512), direct(4 * 512);
  llama::dequantize_rows(w, 1, 3, rows);
  llama::dequantize_q4_k({reinterpret_cast<const llama::BlockQ4_K*>(bytes.data()), 8}, direct);
  CHECK(std::memcmp(rows.data(), direct.data() + 512, rows.size() * 4) == 0);
}

TEST_CASE("block products: Q8_0 activations are quantized as llama.cpp does on x86",
          "[gguf][kernels]") {
  std::vector<float> x(64, 0.0f);
  x[0] = 127.0f;  // scale 1: values are x rounded half to even
  x[1] = 2.5f;
  x[2] = -3.5f;
  x[3] = 0.5f;
  x[4] = 126.6f;
  // Block 2: a scale whose f16 rounding shows.
  for (int j = 0; j < 32; ++j) x[32 + j] = 0.001f * static_cast<float>(j);
  for (llama::SimdLevel level : llama::kSimdLevels) {
    if (!llama::simd_level_supported(level)) {
      WARN("this CPU does not run the " << llama::to_string(level) << " level: not tested");
      continue;
    }
    INFO("level " << llama::to_string(level));
    llama::Q8Vector q;
    q.resize(64, 32);
    llama::quantize_activations_q8_0_blocks(x, q.values, q.scales, level);
    CHECK(q.group_size == 32);
    CHECK(q.scales[0] == 1.0f);
    CHECK(q.values[1] == 2);
    CHECK(q.values[2] == -4);
    CHECK(q.values[3] == 0);
    CHECK(q.values[4] == 127);
    CHECK(q.values[0] == 127);
    CHECK(q.scales[1] == llama::f16_to_f32(llama::f32_to_f16(0.031f / 127.f)));
    CHECK(q.scales[1] != 0.031f / 127.f);
    CHECK(q.values[32 + 31] == 127);
    CHECK(q.values[32 + 16] == static_cast<int8_t>(std::nearbyint(0.016f * (127.f / 0.031f))));
    // A zero block: scale 0, values 0.
    std::vector<float> zeros(32, 0.0f);
    q.resize(32, 32);
    llama::quantize_activations_q8_0_blocks(zeros, q.values, q.scales, level);
    CHECK(q.scales[0] == 0.0f);
    CHECK(q.values[7] == 0);
  }
}

TEST_CASE("block products: every SIMD level quantizes Q8_0 activations with the portable bits",
          "[gguf][kernels]") {
  // Random blocks of every magnitude, ties at .5 after scaling, and the odd
  // values: NaN, infinities, -0, f16-subnormal and f16-overflowing scales.
  const int64_t blocks = 400;
  std::vector<float> x = random_vector(blocks * 32, 23);
  std::mt19937 rng(29);
  for (int64_t b = 0; b < blocks; ++b) {
    const float m = std::ldexp(1.0f, static_cast<int>(rng() % 60) - 30);
    for (int j = 0; j < 32; ++j) x[b * 32 + j] *= m;
  }
  for (int j = 0; j < 32; ++j) x[32 + j] = static_cast<float>(j) - 15.5f;  // 127/15.5 ties
  x[64] = std::nanf("");
  x[96] = std::numeric_limits<float>::infinity();
  x[97] = 1.0f;
  x[128] = -std::numeric_limits<float>::infinity();
  for (int j = 0; j < 32; ++j) x[160 + j] = -0.0f;
  for (int j = 0; j < 32; ++j) x[192 + j] = 1e-9f * static_cast<float>(j);  // f16 subnormal scale
  for (int j = 0; j < 32; ++j) x[224 + j] = 1e7f * static_cast<float>(j - 16);  // f16 inf scale
  x[256] = std::nanf("");
  x[257] = -std::nanf("");
  for (int j = 2; j < 32; ++j) x[256 + j] = std::nanf("");  // all NaN
  std::vector<int8_t> want(x.size()), got(x.size());
  std::vector<float> want_s(blocks), got_s(blocks);
  llama::quantize_activations_q8_0_blocks(x, want, want_s, llama::SimdLevel::portable);
  CHECK(want[64] == 0);
  CHECK(want_s[8] == 0.0f);  // all NaN: amax 0
  for (llama::SimdLevel level : llama::kSimdLevels) {
    if (!llama::simd_level_supported(level)) {
      WARN("this CPU does not run the " << llama::to_string(level) << " level: not tested");
      continue;
    }
    INFO("level " << llama::to_string(level));
    std::fill(got.begin(), got.end(), int8_t{99});
    llama::quantize_activations_q8_0_blocks(x, got, got_s, level);
    CHECK(std::memcmp(want.data(), got.data(), got.size()) == 0);
    CHECK(std::memcmp(want_s.data(), got_s.data(), got_s.size() * 4) == 0);
  }
  std::vector<float> bad(40);
  std::vector<int8_t> bv(40);
  std::vector<float> bs(1);
  CHECK_THROWS_WITH(llama::quantize_activations_q8_0_blocks(bad, bv, bs),
                    Catch::Contains("do not match blocks of 32"));
}

TEST_CASE(
    "block products: Q8_0 and Q4_0 vector kernels with q8_0-block inputs equal the portable "
    "ones bit for bit",
    "[gguf][kernels]") {
  // Odd and even block counts, with and without a tail after 16-block steps;
  // 37 rows: two 16-row passes (the first prefetching the second), a pair and
  // a single row (VNNI), four 8-row groups and 5 rows (AVX2); the range
  // [3, 36) starts off both boundaries. Q4_0: its codes - 8 as int8.
  const auto kernels = llama::test::runnable_kernel_sets("Q8_0/Q4_0 block products");
  for (BlockKind kind : {BlockKind::q8_0, BlockKind::q4_0})
    for (int64_t cols : {32, 64, 96, 512, 544, 1024, 2816}) {
      INFO(llama::to_string(kind) << " cols " << cols);
      const int64_t rows = 37;
      const auto bytes = random_blocks(kind, rows, cols, static_cast<uint32_t>(cols));
      const BlockMatrix w{bytes, rows, cols, kind};
      llama::Q8Vector x;
      llama::quantize_activations_q8_0_blocks(random_vector(cols, 5), x);
      std::vector<float> a(rows), b(rows), c(rows - 4);
      llama::q8_0_blocks_matvec_rows(a, w, x, 0, rows, llama::KernelSet::portable);
      for (llama::KernelSet kernel : kernels) {
        INFO(llama::to_string(kernel));
        llama::q8_0_blocks_matvec_rows(b, w, x, 0, rows, kernel);
        CHECK(std::memcmp(a.data(), b.data(), a.size() * 4) == 0);
        llama::q8_0_blocks_matvec_rows(c, w, x, 3, rows - 1, kernel);
        CHECK(std::memcmp(a.data() + 3, c.data(), c.size() * 4) == 0);
      }
      // And the result is the exact product of the quantized values to f32 rounding.
      std::vector<float> xq(static_cast<size_t>(cols));
      for (int64_t k = 0; k < cols; ++k) xq[k] = x.values[k] * x.scales[k / 32];
      std::vector<double> abs;
      const auto want = exact_products(w, xq, &abs);
      for (int64_t r = 0; r < rows; ++r) CHECK(std::fabs(a[r] - want[r]) <= 1e-5 * abs[r]);
    }
}

TEST_CASE(
    "block products: the Q8_0 and Q4_0 q8_0-block batch equals one vector at a time bit "
    "for bit",
    "[gguf][kernels]") {
  // Rows of whole 16-block steps and of steps plus a tail.
  for (BlockKind kind : {BlockKind::q8_0, BlockKind::q4_0})
    for (const int64_t cols : {1024, 1056})
      for (auto kernel : llama::test::runnable_kernel_sets("block products")) {
        INFO(llama::to_string(kind) << " " << llama::to_string(kernel) << " cols " << cols);
        const int64_t rows = 600, tokens = 21;  // rows span three 256-row tiles
        const auto bytes = random_blocks(kind, rows, cols, 9);
        const BlockMatrix w{bytes, rows, cols, kind};
        std::vector<int8_t> values(tokens * cols);
        std::vector<float> scales(tokens * cols / 32);
        for (int64_t t = 0; t < tokens; ++t) {
          llama::quantize_activations_q8_0_blocks(
              random_vector(cols, static_cast<uint32_t>(100 + t)),
              std::span(values).subspan(t * cols, cols),
              std::span(scales).subspan(t * cols / 32, cols / 32));
        }
        const int64_t r0 = 5, r1 = 599;
        std::vector<float> batch(tokens * rows, -1.0f);
        llama::q8_0_blocks_matmat_rows(batch, rows, w, {values, scales, cols, 32}, r0, r1, kernel);
        for (int64_t t = 0; t < tokens; ++t) {
          const std::span<const int8_t> xv = std::span(values).subspan(t * cols, cols);
          const std::span<const float> xs = std::span(scales).subspan(t * cols / 32, cols / 32);
          const llama::Q8View xt(xv, xs, 32);
          std::vector<float> one(r1 - r0);
          llama::q8_0_blocks_matvec_rows(one, w, xt, r0, r1, kernel);
          REQUIRE(std::memcmp(one.data(), batch.data() + t * rows + r0, one.size() * 4) == 0);
          CHECK(batch[t * rows + r0 - 1] == -1.0f);  // rows outside the range untouched
          CHECK(batch[t * rows + r1] == -1.0f);
        }
      }
}

TEST_CASE("block products: Q8_0 and Q4_0 rows longer than 4096 blocks match the portable loop",
          "[gguf][kernels]") {
  // The VNNI decode kernels keep x's per-block corrections on the stack up to
  // 4096 blocks and on the heap past that: a row of 4100 blocks takes the heap,
  // through the 16-row lanes and the single rows after them.
  const int64_t rows = 19, cols = 4100 * 32;
  for (BlockKind kind : {BlockKind::q8_0, BlockKind::q4_0}) {
    const auto bytes = random_blocks(kind, rows, cols, 23);
    const BlockMatrix w{bytes, rows, cols, kind};
    std::vector<int8_t> values(cols);
    std::vector<float> scales(cols / 32);
    llama::quantize_activations_q8_0_blocks(random_vector(cols, 29), values, scales);
    const llama::Q8View x(values, scales, 32);
    std::vector<float> want(rows);
    llama::q8_0_blocks_matvec_rows(want, w, x, 0, rows, llama::KernelSet::portable);
    for (auto kernel : llama::test::runnable_kernel_sets("block products")) {
      INFO(llama::to_string(kind) << " " << llama::to_string(kernel));
      std::vector<float> got(rows);
      llama::q8_0_blocks_matvec_rows(got, w, x, 0, rows, kernel);
      CHECK(std::memcmp(got.data(), want.data(), got.size() * 4) == 0);
    }
  }
}

TEST_CASE(
    "block products: the Q4_0 batch equals one vector at a time for any batch size and row "
    "range",
    "[gguf][kernels]") {
  // The VNNI batch kernel holds 16 rows in the lanes and a few panels x tokens
  // per register tile, repacking 64 rows at a time; the avx2 sets' int8 batch
  // kernel (from 4 tokens) 8 tokens in the lanes, 3 rows x 3 blocks of 8 per
  // tile, 64 rows at a time within 256-row unpacked tiles: batches of 1 to 13,
  // 17 and 37 tokens and ranges inside, across and off those boundaries (a
  // single row, part of a panel, panels plus a partial one, more than one
  // repacked tile), odd and even block counts; on AMX-INT8 tiles, 16 rows x 16
  // tokens a tile product within the same 256-row unpacked tiles.
  for (const int64_t cols : {32, 96, 1056})
    for (auto kernel : {llama::KernelSet::portable, llama::KernelSet::avx512_vnni,
                        llama::KernelSet::avx2, llama::KernelSet::avx_vnni}) {
      if (!llama::kernel_set_available(kernel)) {
        WARN("this CPU does not run the " << llama::to_string(kernel)
                                          << " kernel set: its Q4_0 batch is not tested");
        continue;
      }
      const int64_t rows = 150;
      const auto bytes = random_blocks(BlockKind::q4_0, rows, cols, static_cast<uint32_t>(cols));
      const BlockMatrix w{bytes, rows, cols, BlockKind::q4_0};
      // At avx512_vnni: the VNNI batch kernel, and the AMX-INT8 tiles where the CPU has them.
      std::vector<const char*> settings{nullptr};
      if (kernel == llama::KernelSet::avx512_vnni) settings.insert(settings.begin(), "avx512-vnni");
      for (const int64_t tokens : {1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 17, 37}) {
        std::vector<int8_t> values(tokens * cols);
        std::vector<float> scales(tokens * cols / 32);
        for (int64_t t = 0; t < tokens; ++t) {
          llama::quantize_activations_q8_0_blocks(
              random_vector(cols, static_cast<uint32_t>(7 * t + cols)),
              std::span(values).subspan(t * cols, cols),
              std::span(scales).subspan(t * cols / 32, cols / 32));
        }
        for (const auto& [r0, r1] : std::vector<std::pair<int64_t, int64_t>>{
                 {0, rows}, {3, 4}, {5, 37}, {16, 80}, {17, 149}, {64, 128}})
          for (const char* setting : settings) {
            const llama::test::ScopedEnv env("LLAMA_Q8_KERNEL", setting);
            INFO(llama::to_string(kernel)
                 << " cols " << cols << " tokens " << tokens << " rows [" << r0 << ", " << r1
                 << "), LLAMA_Q8_KERNEL " << (setting != nullptr ? setting : "unset"));
            std::vector<float> batch(tokens * rows, -1.0f);
            llama::q8_0_blocks_matmat_rows(batch, rows, w, {values, scales, cols, 32}, r0, r1,
                                           kernel);
            for (int64_t t = 0; t < tokens; ++t) {
              const llama::Q8View xt(
                  std::span<const int8_t>(values).subspan(t * cols, cols),
                  std::span<const float>(scales).subspan(t * cols / 32, cols / 32), 32);
              std::vector<float> one(r1 - r0);
              llama::q8_0_blocks_matvec_rows(one, w, xt, r0, r1, llama::KernelSet::portable);
              REQUIRE(std::memcmp(one.data(), batch.data() + t * rows + r0, one.size() * 4) == 0);
              if (r0 > 0) CHECK(batch[t * rows + r0 - 1] == -1.0f);
              if (r1 < rows) CHECK(batch[t * rows + r1] == -1.0f);
            }
          }
      }
      // A batch whose scales are not its vectors'.
      std::vector<int8_t> values(cols);
      std::vector<float> scales(cols / 32 + 1);
      std::vector<float> out(rows);
      CHECK_THROWS_WITH(
          llama::q8_0_blocks_matmat_rows(out, rows, w, {values, scales, cols, 32}, 0, rows, kernel),
          Catch::Contains("is not whole vectors of"));
    }
}

TEST_CASE("block products: Q4_0 against q8_0 blocks is llama.cpp's x86 arithmetic",
          "[gguf][kernels]") {
  // ggml_gemv_q4_0_8x8_q8_0 (and its gemm), what llama.cpp runs for Q4_0 on
  // AVX2: per block the exact int32 dot of codes - 8 with x's int8, then
  // acc = fma(float(dot), w_d * x_d, acc), block after block.
  const int64_t rows = 19, cols = 544;
  const auto bytes = random_blocks(BlockKind::q4_0, rows, cols, 31);
  const BlockMatrix w{bytes, rows, cols, BlockKind::q4_0};
  llama::Q8Vector x;
  llama::quantize_activations_q8_0_blocks(random_vector(cols, 37), x);
  std::vector<float> want(rows);
  for (int64_t r = 0; r < rows; ++r) {
    const auto* blk = reinterpret_cast<const llama::BlockQ4_0*>(w.row(r));
    float acc = 0.0f;
    for (int64_t b = 0; b < cols / 32; ++b) {
      int32_t dot = 0;
      for (int j = 0; j < 16; ++j) {
        dot += ((blk[b].qs[j] & 15) - 8) * x.values[b * 32 + j];
        dot += ((blk[b].qs[j] >> 4) - 8) * x.values[b * 32 + j + 16];
      }
      acc = std::fma(static_cast<float>(dot), llama::f16_to_f32(blk[b].d) * x.scales[b], acc);
    }
    want[r] = acc;
  }
  for (auto kernel : llama::test::runnable_kernel_sets("block products")) {
    INFO(llama::to_string(kernel));
    std::vector<float> got(rows);
    llama::q8_0_blocks_matvec_rows(got, w, x, 0, rows, kernel);
    CHECK(std::memcmp(got.data(), want.data(), want.size() * 4) == 0);
  }
  // Its f32-input product is gone: Q4_0 has one arithmetic, llama.cpp's.
  std::vector<float> out(rows);
  CHECK_THROWS_WITH(llama::blocks_matvec_rows_f32(out, w, random_vector(cols, 3), 0, rows,
                                                  llama::KernelSet::portable),
                    "f32-input block products: Q4_0 weights take quantized inputs");
}

TEST_CASE("block products: quantized weights have no f32-input product", "[gguf][kernels]") {
  // Each quantized type has one arithmetic, llama.cpp's quantized activations.
  for (BlockKind kind : {BlockKind::q8_0, BlockKind::q4_k, BlockKind::q5_k, BlockKind::q6_k}) {
    const auto bytes = random_blocks(kind, 2, 256, 3);
    const BlockMatrix w{bytes, 2, 256, kind};
    std::vector<float> out(2);
    CHECK_THROWS_WITH(llama::blocks_matvec_rows_f32(out, w, random_vector(256, 3), 0, 2,
                                                    llama::KernelSet::portable),
                      std::string("f32-input block products: ") + llama::to_string(kind) +
                          " weights take quantized inputs");
  }
}

TEST_CASE("block products: f32-input kinds refuse q8_0-block inputs", "[gguf][kernels]") {
  const auto bytes = random_blocks(BlockKind::q4_k, 2, 256, 3);
  const BlockMatrix w{bytes, 2, 256, BlockKind::q4_k};
  llama::Q8Vector x;
  llama::quantize_activations_q8_0_blocks(random_vector(256, 5), x);
  std::vector<float> out(2);
  CHECK_THROWS_WITH(llama::q8_0_blocks_matvec_rows(out, w, x, 0, 2, llama::KernelSet::portable),
                    "q8_0-block products: Q4_K weights take f32 inputs");
}

TEST_CASE("block products: malformed matrices are refused", "[gguf][kernels]") {
  std::vector<std::byte> b(34 * 4);
  CHECK_THROWS_WITH(llama::check_block_matrix({b, 2, 48, BlockKind::q8_0}, "t"),
                    "t: Q8_0 matrix of 2 x 48 does not hold whole blocks of 32");
  CHECK_THROWS_WITH(llama::check_block_matrix({b, 3, 64, BlockKind::q8_0}, "t"),
                    "t: Q8_0 matrix of 3 x 64 needs 204 bytes, has 136");
  CHECK_NOTHROW(llama::check_block_matrix({b, 2, 64, BlockKind::q8_0}, "t"));
}
