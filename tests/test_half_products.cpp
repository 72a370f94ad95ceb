// bf16/f16 products read in place (kernels/half_products.hpp, the bf16/f16
// rows of kernels/products.hpp): every batch path this CPU runs against the
// portable kernel over odd sizes (rows and columns off every tile, batches
// 1..70, columns not multiples of 32): the exact portable path against
// decode's kernel bit for bit, avx512 against the f32 GEMM on the upcast
// weights bit for bit (and decode's kernels of each level against each
// other), every path within 1e-6 of the portable one, the fast path within
// its stated bound. The
// output names the paths run and those this CPU lacks (never counted passed).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "llama/error.hpp"
#include "llama/kernels/dispatch/cpu_features.hpp"
#include "llama/kernels/dispatch/product_table.hpp"
#include "llama/kernels/numbers/half.hpp"
#include "llama/kernels/products/gemm_f32.hpp"
#include "llama/kernels/products/gguf_products.hpp"
#include "llama/kernels/products/half_products.hpp"
#include "test_support.hpp"

using namespace llama;

namespace {

std::vector<HalfPath> runnable_paths(const std::string& what) {
  return test::runnable(what, "paths", kHalfPaths, half_path_available, [](HalfPath p) {
    std::string why = to_string(p);
    return why.append(" (needs ").append(half_path_requirement(p)).append(")");
  });
}

struct Half {
  std::vector<uint16_t> bits;  // bf16 or f16 [rows, cols]
  BlockMatrix m;
};

Half random_half(BlockKind kind, int64_t rows, int64_t cols, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  Half h;
  h.bits.resize(static_cast<size_t>(rows * cols));
  for (uint16_t& b : h.bits) b = kind == BlockKind::bf16 ? f32_to_bf16(d(rng)) : f32_to_f16(d(rng));
  h.m = {std::as_bytes(std::span(h.bits)), rows, cols, kind};
  return h;
}

float value(const Half& h, int64_t r, int64_t c) {
  const uint16_t b = h.bits[static_cast<size_t>(r * h.m.cols + c)];
  return h.m.kind == BlockKind::bf16 ? bf16_to_f32(b) : f16_to_f32(b);
}

// out [n, rows] for the batch x [n, ld].
std::vector<float> batch(const Half& h, const std::vector<float>& x, int64_t ld, int64_t n,
                         HalfPath path) {
  std::vector<float> out(static_cast<size_t>(n * h.m.rows), -7.0f);
  half_matmat_rows(out, h.m.rows, h.m, x, ld, n, 0, h.m.rows, path);
  return out;
}

constexpr int64_t kRows[] = {1, 3, 5, 17, 67};
constexpr int64_t kCols[] = {1, 15, 16, 17, 31, 33, 100, 257};
constexpr int64_t kBatches[] = {1, 2, 3, 4, 5, 7, 16, 31, 64, 70};

}  // namespace

TEST_CASE("bf16/f16 batch paths against the portable kernel and decode's bits", "[half][kernels]") {
  const std::vector<HalfPath> paths = runnable_paths("half products");
  for (BlockKind kind : {BlockKind::bf16, BlockKind::f16}) {
    for (int64_t rows : kRows) {
      for (int64_t cols : kCols) {
        const Half h = random_half(kind, rows, cols, static_cast<uint32_t>(rows * 1000 + cols));
        const int64_t ld = cols + 3;  // vectors not back to back
        for (int64_t n : kBatches) {
          INFO(to_string(kind) << " " << rows << "x" << cols << ", batch " << n);
          const std::vector<float> x =
              test::random_floats(static_cast<size_t>(n * ld), 7u + n, 2.0f);
          const std::vector<float> portable = batch(h, x, ld, n, HalfPath::portable);
          for (HalfPath path : paths) {
            if (half_path_reads_bf16(path) && kind != BlockKind::bf16) continue;
            INFO("path " << to_string(path));
            const std::vector<float> got = batch(h, x, ld, n, path);
            const KernelSet decode =
                path == HalfPath::portable ? KernelSet::portable : KernelSet::avx512_vnni;
            const HalfPath decode_path =
                path == HalfPath::portable ? HalfPath::portable : HalfPath::avx512;
            // Decode's AVX-512 block kernels run where the CPU has VNNI too.
            const bool check_decode = path == HalfPath::portable ||
                                      (path == HalfPath::avx512 && kernel_set_available(decode));
            // avx512, avx2: the f32 GEMM of that level on the upcast weights, bit for bit.
            std::vector<float> gemm;
            if (path == HalfPath::avx512 || path == HalfPath::avx2) {
              std::vector<float> up(h.bits.size());
              for (int64_t r = 0; r < rows; ++r) {
                for (int64_t k = 0; k < cols; ++k)
                  up[static_cast<size_t>(r * cols + k)] = value(h, r, k);
              }
              gemm.assign(got.size(), -7.0f);
              gemm_f32_rows(path == HalfPath::avx2 ? SimdLevel::avx2 : SimdLevel::avx512,
                            gemm.data(), rows, up.data(), x.data(), ld, cols, n, 0, rows, nullptr,
                            0);
              CHECK(got == gemm);
            }
            for (int64_t t = 0; t < n; ++t) {
              std::vector<float> dec(static_cast<size_t>(rows));
              if (check_decode) {
                const auto xt =
                    std::span(x).subspan(static_cast<size_t>(t * ld), static_cast<size_t>(cols));
                // Decode one row at a time (blocks_matvec_rows_f32: at avx512_vnni the
                // avx512 decode kernel's one-row form), then the 4-row kernel over a
                // split row range: the same bits.
                for (int64_t r = 0; r < rows; ++r) {
                  blocks_matvec_rows_f32(std::span(dec).subspan(static_cast<size_t>(r), 1), h.m, xt,
                                         r, r + 1, decode);
                }
                std::vector<float> four(static_cast<size_t>(rows));
                const int64_t mid = rows / 2;
                half_matvec_rows(std::span(four).first(static_cast<size_t>(mid)), h.m, xt, 0, mid,
                                 decode_path);
                half_matvec_rows(std::span(four).subspan(static_cast<size_t>(mid)), h.m, xt, mid,
                                 rows, decode_path);
                CHECK(four == dec);
              }
              for (int64_t r = 0; r < rows; ++r) {
                INFO("row " << r << ", vector " << t);
                const float g = got[static_cast<size_t>(t * rows + r)];
                const float p = portable[static_cast<size_t>(t * rows + r)];
                double mag = 0;  // sum |w_k x_k|
                for (int64_t k = 0; k < cols; ++k) {
                  mag += std::fabs(double(value(h, r, k)) * x[static_cast<size_t>(t * ld + k)]);
                }
                if (half_path_is_fast(path)) {
                  CHECK(std::fabs(double(g) - p) <= std::ldexp(mag, -8) + 1e-6 * mag);
                } else {
                  // portable: decode's bits
                  if (path == HalfPath::portable) CHECK(g == dec[static_cast<size_t>(r)]);
                  CHECK(std::fabs(double(g) - p) <= 1e-6 * mag);
                }
              }
            }
          }
        }
      }
    }
  }
}

TEST_CASE("bf16/f16 decode at the avx2 level: avx512's bits, the portable kernel's within 1e-6",
          "[half][kernels]") {
  const bool avx2 = half_path_available(HalfPath::avx2);
  const bool avx512 = half_path_available(HalfPath::avx512);
  std::cout << "half decode avx2-f32: " << (avx2 ? "run" : "not run (the CPU lacks AVX2)")
            << "; bit equality with avx512-f32: "
            << (avx2 && avx512 ? "run" : "not run (the CPU lacks AVX-512 F/BW/VL)") << "\n";
  if (!avx2) {
    WARN("this CPU lacks " << half_path_requirement(HalfPath::avx2) << ": avx2-f32 not tested");
    return;
  }
  if (!avx512) WARN("this CPU lacks AVX-512: avx2-f32 = avx512-f32 not tested");
  for (BlockKind kind : {BlockKind::bf16, BlockKind::f16}) {
    // Rows off the 4- and 3-row steps; columns off the 8/16/32-value steps.
    for (int64_t rows : {1, 2, 3, 4, 5, 7, 17, 67}) {
      for (int64_t cols : {1, 7, 8, 15, 16, 17, 31, 32, 33, 48, 100, 257, 1000}) {
        INFO(to_string(kind) << " " << rows << "x" << cols);
        const Half h = random_half(kind, rows, cols, static_cast<uint32_t>(rows * 7919 + cols));
        const std::vector<float> x = test::random_floats(static_cast<size_t>(cols), 31u, 2.0f);
        const auto run = [&](HalfPath path) {
          // -7: a result left unwritten shows; two ranges split off the row step.
          std::vector<float> out(static_cast<size_t>(rows), -7.0f);
          const int64_t mid = std::min<int64_t>(rows, rows / 2 + 1);
          half_matvec_rows(std::span(out).first(static_cast<size_t>(mid)), h.m, x, 0, mid, path);
          half_matvec_rows(std::span(out).subspan(static_cast<size_t>(mid)), h.m, x, mid, rows,
                           path);
          return out;
        };
        const std::vector<float> portable = run(HalfPath::portable);
        const std::vector<float> got = run(HalfPath::avx2);
        for (int64_t r = 0; r < rows; ++r) {
          double mag = 0;  // sum |w_k x_k|
          for (int64_t k = 0; k < cols; ++k) {
            mag += std::fabs(double(value(h, r, k)) * x[static_cast<size_t>(k)]);
          }
          INFO("row " << r);
          CHECK(std::fabs(double(got[static_cast<size_t>(r)]) - portable[static_cast<size_t>(r)]) <=
                1e-6 * mag);
        }
        if (avx512) CHECK(got == run(HalfPath::avx512));
      }
    }
  }
}

TEST_CASE("bf16/f16 batch results do not depend on the row range", "[half][kernels]") {
  for (HalfPath path : runnable_paths("half products, row ranges")) {
    const Half h = random_half(BlockKind::bf16, 70, 45, 3);
    const int64_t n = 9;
    const std::vector<float> x = test::random_floats(static_cast<size_t>(n * 45), 4, 2.0f);
    const std::vector<float> whole = batch(h, x, 45, n, path);
    std::vector<float> parts(whole.size(), -7.0f);
    for (int64_t r0 : {0, 5, 13, 64}) {
      const int64_t r1 = r0 == 0 ? 5 : r0 == 5 ? 13 : r0 == 13 ? 64 : 70;
      half_matmat_rows(parts, 70, h.m, x, 45, n, r0, r1, path);
    }
    INFO(to_string(path));
    CHECK(parts == whole);
  }
}

TEST_CASE("the product table runs bf16/f16 tensors in place", "[half][kernels]") {
  const test::ScopedEnv unit("LLAMA_BF16_UNIT", "on");  // fast below takes the bf16 unit
  const KernelSet kernel = best_kernel_set();
  for (DType dtype : {DType::bf16, DType::f16}) {
    const BlockKind kind = dtype == DType::bf16 ? BlockKind::bf16 : BlockKind::f16;
    const Half h = random_half(kind, 37, 70, 11);
    const Tensor w = Tensor::view("w", dtype, {37, 70}, std::as_bytes(std::span(h.bits)));
    INFO(to_string(dtype));
    CHECK(product_dtypes().contains(dtype));
    CHECK(input_format(w) == InputFormat{InputKind::f32, 0});
    const int64_t n = 5;
    const std::vector<float> x = test::random_floats(static_cast<size_t>(n * 70), 12, 2.0f);
    std::vector<float> batched(static_cast<size_t>(n * 37));
    matmat_rows(batched, 37, w, ProductBatch{x, 70, {}, n}, 0, 37, kernel);
    for (int64_t t = 0; t < n; ++t) {
      std::vector<float> one(37);
      matvec_rows(one, w, ProductInput{std::span(x).subspan(static_cast<size_t>(t * 70), 70), {}},
                  0, 37, kernel);
      for (int64_t r = 0; r < 37; ++r) {
        const float b = batched[static_cast<size_t>(t * 37 + r)];
        // The f32 GEMM's sums (AVX-512), or amx-bf16x3's (exact terms, plane
        // 0's chain of f32 roundings as the GEMM's, the others' 2^-8 below):
        // decode's to f32 rounding, two f32 sums of 70 terms of |w x| <= 2
        // (each within 70 * 2^-24 * 140); elsewhere decode's bits.
        if (batch_runs_gemm_f32(w, kernel, Numerics::exact) ||
            half_batch_path(kind, kernel, Numerics::exact) == HalfPath::amx_bf16x3) {
          CHECK(std::fabs(b - one[r]) <= std::ldexp(2.0 * 70 * 140, -24));
        } else {
          CHECK(b == one[r]);
        }
      }
    }
    // fast: bf16 within the bound of numerics.hpp (f16 stays exact).
    ProductBatch fast{x, 70, {}, n};
    fast.numerics = Numerics::fast;
    std::vector<float> approx(batched.size());
    matmat_rows(approx, 37, w, fast, 0, 37, kernel);
    for (size_t i = 0; i < approx.size(); ++i) {
      // 2^-8 sum |w x| with |w| <= 1, |x| <= 2 over 70 terms.
      CHECK(std::fabs(approx[i] - batched[i]) <= std::ldexp(140.0, -8));
    }
    const std::string d = describe_products(w, kernel, Numerics::fast);
    CHECK_THAT(d, Catch::Contains("read in place") && Catch::Contains("decode") &&
                      Catch::Contains("prefill"));
  }
}

TEST_CASE("bf16/f16 batch paths refuse what they cannot run", "[half][kernels]") {
  const Half f16 = random_half(BlockKind::f16, 4, 32, 1);
  const std::vector<float> x(64, 1.0f);
  std::vector<float> out(8);
  if (half_path_available(HalfPath::onednn_bf16)) {
    CHECK_THROWS_WITH(half_matmat_rows(out, 4, f16.m, x, 32, 2, 0, 4, HalfPath::onednn_bf16),
                      Catch::Contains("onednn-bf16 path takes bf16 weights"));
    const test::ScopedEnv unit("LLAMA_BF16_UNIT", "on");  // the probe may say it is slower
    const HalfPath decode = half_decode_path(best_kernel_set());
    const HalfPath fast =
        half_path_available(HalfPath::amx_bf16) ? HalfPath::amx_bf16 : HalfPath::onednn_bf16;
    CHECK(half_batch_path(BlockKind::bf16, best_kernel_set(), Numerics::fast) ==
          (decode == HalfPath::avx512 ? fast : decode));
  } else {
    WARN("this CPU lacks AVX512-BF16: the refusal of an unavailable path is what is tested");
    CHECK_THROWS_WITH(half_matmat_rows(out, 4, f16.m, x, 32, 2, 0, 4, HalfPath::onednn_bf16),
                      Catch::Contains("this CPU lacks AVX512-BF16"));
  }
  CHECK_THROWS_WITH(half_matvec_rows(std::span(out).first(4), f16.m, std::span(x).first(32), 0, 4,
                                     HalfPath::onednn_bf16),
                    Catch::Contains("no onednn-bf16 decode"));
  if (half_path_available(HalfPath::amx_bf16)) {
    CHECK_THROWS_WITH(half_matmat_rows(out, 4, f16.m, x, 32, 2, 0, 4, HalfPath::amx_bf16),
                      Catch::Contains("amx-bf16 path takes bf16 weights"));
  } else {
    CHECK_THROWS_WITH(half_matmat_rows(out, 4, f16.m, x, 32, 2, 0, 4, HalfPath::amx_bf16),
                      Catch::Contains("this CPU lacks AMX-BF16"));
  }
  const Half bf16 = random_half(BlockKind::bf16, 4, 32, 1);
  CHECK_THROWS_WITH(half_matmat_rows(out, 4, bf16.m, x, 32, 3, 0, 4, HalfPath::portable),
                    Catch::Contains("smaller than the batch"));
  CHECK_FALSE(
      half_path_is_fast(half_batch_path(BlockKind::f16, KernelSet::avx512_vnni, Numerics::fast)));
  CHECK_FALSE(
      half_path_is_fast(half_batch_path(BlockKind::bf16, best_kernel_set(), Numerics::exact)));
  // Their own level: AVX-512 F/BW/VL, whatever the int8 kernels' VNNI says;
  // KernelSet::portable keeps the plain loops only where VNNI would have run.
  // The avx2 level has no int8 kernels (every caller's is portable): avx2 for all.
  const bool avx512 = simd_level() == SimdLevel::avx512;
  const bool vnni = kernel_set_available(KernelSet::avx512_vnni);
  const HalfPath below = simd_level() == SimdLevel::avx2 ? HalfPath::avx2 : HalfPath::portable;
  CHECK(half_decode_path(KernelSet::portable) == (avx512 && !vnni ? HalfPath::avx512 : below));
  if (vnni) {
    CHECK(half_batch_path(BlockKind::bf16, KernelSet::portable, Numerics::fast) == below);
    CHECK(half_decode_path(KernelSet::avx512_vnni) == (avx512 ? HalfPath::avx512 : below));
  }
  if (simd_level() == SimdLevel::avx2) {
    CHECK(half_batch_path(BlockKind::bf16, best_kernel_set(), Numerics::exact) == HalfPath::avx2);
    CHECK_THAT(explain_half_batch_path(BlockKind::bf16, best_kernel_set(), Numerics::fast),
               Catch::StartsWith("avx2-f32 (fast numerics: the bf16 unit needs the avx512 level"));
    CHECK_THAT(explain_half_decode_path(best_kernel_set()), Catch::StartsWith("avx2-f32 (upcast"));
  }
  CHECK(parse_numerics("fast", "--numerics") == Numerics::fast);
  CHECK_THROWS_WITH(parse_numerics("quick", "--numerics"),
                    Catch::Contains("--numerics: unknown numerics policy 'quick'"));
}

TEST_CASE("amx-bf16 and amx-bf16x3 over panels, column chunks and splits", "[half][kernels][amx]") {
  if (!half_path_available(HalfPath::amx_bf16)) {
    std::cout << "amx-bf16, amx-bf16x3: not run (this CPU lacks "
              << half_path_requirement(HalfPath::amx_bf16) << ")\n";
    WARN("this CPU lacks " << half_path_requirement(HalfPath::amx_bf16)
                           << ": amx-bf16 and amx-bf16x3 not tested");
    return;
  }
  std::cout << "amx-bf16, amx-bf16x3: run\n";
  // Rows over several 32-row panels with a tail; columns past one 4096-column
  // panel (two and three chunks) with a tail off the 32-value tile.
  for (const HalfPath path : {HalfPath::amx_bf16, HalfPath::amx_bf16x3}) {
    for (const int64_t rows : {33, 130}) {
      for (const int64_t cols : {1000, 4096 + 100, 8192 + 33}) {
        const Half h = random_half(BlockKind::bf16, rows, cols, static_cast<uint32_t>(rows + cols));
        for (const int64_t n : {1, 17, 40}) {
          INFO(to_string(path) << " " << rows << "x" << cols << ", batch " << n);
          const int64_t ld = cols + 1;
          const std::vector<float> x =
              test::random_floats(static_cast<size_t>(n * ld), 3u + n, 2.0f);
          const std::vector<float> got = batch(h, x, ld, n, path);
          for (int64_t t = 0; t < n; ++t) {
            for (int64_t r = 0; r < rows; ++r) {
              double exact = 0, mag = 0;
              for (int64_t k = 0; k < cols; ++k) {
                const double p = double(value(h, r, k)) * x[static_cast<size_t>(t * ld + k)];
                exact += p;
                mag += std::fabs(p);
              }
              INFO("row " << r << ", vector " << t);
              const double err = std::fabs(got[static_cast<size_t>(t * rows + r)] - exact);
              if (path == HalfPath::amx_bf16) {
                CHECK(err <= std::ldexp(mag, -8) + 1e-6 * mag);
              } else {
                // Exact terms: plane 0's K roundings, each within 2^-24 of a
                // partial sum <= mag, the lower planes' 2K at 2^-8 of that, one
                // final addition.
                CHECK(err <= double(cols + cols / 64 + 2) * std::ldexp(mag, -24));
              }
            }
          }
          // Row ranges off the panels, and a batch of the first vectors alone:
          // the same bits.
          std::vector<float> split(got.size(), -7.0f);
          for (const auto& [r0, r1] :
               {std::pair<int64_t, int64_t>{0, 5}, {5, rows - 3}, {rows - 3, rows}}) {
            half_matmat_rows(split, rows, h.m, x, ld, n, r0, r1, path);
          }
          CHECK(split == got);
          const int64_t fewer = (n + 1) / 2;
          const std::vector<float> head = batch(h, x, ld, fewer, path);
          CHECK(std::equal(head.begin(), head.end(), got.begin()));
        }
      }
    }
  }
}

TEST_CASE("amx-bf16x3 keeps every bit of the activations", "[half][kernels][amx]") {
  if (!half_path_available(HalfPath::amx_bf16x3)) {
    WARN("this CPU lacks " << half_path_requirement(HalfPath::amx_bf16x3)
                           << ": amx-bf16x3 not tested");
    return;
  }
  // Sums that f32 holds exactly: 12 weights of +-1 a row (the rest zero),
  // anywhere in three column chunks, times activations of 20 significant bits
  // (integers below 2^19, scaled), so every plane carries bits and no sum
  // rounds. amx-bf16x3 must give the sums exactly; amx-bf16, which keeps 8
  // bits of each activation, must not.
  const int64_t rows = 70, cols = 8192 + 77, n = 21, ld = cols;
  std::mt19937 rng(5);
  std::vector<uint16_t> bits(static_cast<size_t>(rows * cols), 0);
  for (int64_t r = 0; r < rows; ++r) {
    for (int j = 0; j < 12; ++j) {
      const auto k = static_cast<int64_t>(rng() % static_cast<uint32_t>(cols));
      bits[static_cast<size_t>(r * cols + k)] = f32_to_bf16(rng() % 2 ? 1.0f : -1.0f);
    }
  }
  const BlockMatrix w{std::as_bytes(std::span(bits)), rows, cols, BlockKind::bf16};
  std::vector<float> x(static_cast<size_t>(n * ld));
  for (float& v : x) {
    v = std::ldexp(static_cast<float>(static_cast<int32_t>(rng() % (1u << 20)) - (1 << 19)), -7);
  }
  std::vector<float> exact(static_cast<size_t>(n * rows)), fast(exact.size());
  half_matmat_rows(exact, rows, w, x, ld, n, 0, rows, HalfPath::amx_bf16x3);
  half_matmat_rows(fast, rows, w, x, ld, n, 0, rows, HalfPath::amx_bf16);
  int64_t fast_off = 0;
  for (int64_t t = 0; t < n; ++t) {
    for (int64_t r = 0; r < rows; ++r) {
      double sum = 0;
      for (int64_t k = 0; k < cols; ++k) {
        sum += double(bf16_to_f32(bits[static_cast<size_t>(r * cols + k)])) *
               x[static_cast<size_t>(t * ld + k)];
      }
      INFO("row " << r << ", vector " << t);
      CHECK(exact[static_cast<size_t>(t * rows + r)] == sum);
      fast_off += fast[static_cast<size_t>(t * rows + r)] != sum;
    }
  }
  CHECK(fast_off > n * rows / 2);
}
