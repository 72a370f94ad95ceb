// The AMX-INT8 int8 batch kernel (kernels/x86/int8_tiles_kernel.hpp) against
// the portable loops, bit for bit, in runq.c's chain and in GGUF Q4_0's: its
// schedule on a model of the tile instructions (amx_tile_model.hpp) wherever
// the CPU has AVX-512 VNNI (its vector half), and on the CPU's own tiles
// where it has AMX-INT8.
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <vector>

#include "amx_tile_model.hpp"
#include "kernels/x86/int8_tiles_kernel.hpp"
#include "llama/kernels/dispatch/cpu_features.hpp"
#include "llama/kernels/dispatch/kernel_set.hpp"
#include "llama/kernels/products/llama2c_int8.hpp"
#include "test_support.hpp"

using namespace llama;
using llama::detail::int8_tiles::Chain;

namespace {

bool cpu_tiles() {
  const CpuFeatures& f = cpu_features();
  return f.amx_tile && f.amx_int8 && f.os_tiles && f.amx_permitted;
}

// GGUF Q4_0's chain written out: int32 per group, then val = fma(float(dot),
// w_scale * x_scale, val) in group order.
void q4_order_loops(std::vector<float>& out, int64_t stride, const QuantizedTensor& w,
                    const detail::Q8Batch& x, int64_t r0, int64_t r1) {
  const int64_t gs = x.group_size, groups = x.cols / gs;
  for (int64_t r = r0; r < r1; ++r) {
    for (int64_t t = 0; t < x.n; ++t) {
      float val = 0;
      for (int64_t g = 0; g < groups; ++g) {
        int32_t dot = 0;
        for (int64_t k = g * gs; k < (g + 1) * gs; ++k) {
          dot += int32_t{w.values[size_t(r * x.cols + k)]} * int32_t{x.values_of(t)[k]};
        }
        val = std::fma(float(dot), w.scales[size_t(r * groups + g)] * x.scales_of(t)[g], val);
      }
      out[size_t(t * stride + r)] = val;
    }
  }
}

struct Shape {
  int64_t gs, groups;
  int extreme;  // 0 random; 1 every product 127 x 127; 2 every product -128 x -127
};

}  // namespace

TEST_CASE("the int8 tile kernel gives the portable bits, on a model of AMX and on the CPU's tiles",
          "[q8][amx]") {
  // Groups of 4..64 bytes take one tdpbssd each, larger ones 64 bytes at a
  // time; 16 rows and 16 tokens a tile pair, so counts around 16, row ranges
  // starting off 0 and ending short of 16 rows (copied into a zeroed tile).
  if (!kernel_set_available(KernelSet::avx512_vnni)) {
    WARN(
        "this CPU has no AVX-512 VNNI: the int8 tile kernel (AMX-INT8 and its AVX-512 half) "
        "is not checked");
    return;
  }
  const bool real = cpu_tiles();
  if (!real) {
    WARN(
        "this CPU (or its OS) gives no AMX-INT8 tiles: the tile kernel's schedule is checked "
        "on the model of the tile instructions only");
  }
  std::mt19937 rng(23);
  std::uniform_int_distribution<int> byte(-128, 127);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const int64_t rows = 70, stride = rows + 3;  // out rows are padded: padding stays untouched
  for (const Shape shape : {Shape{32, 7, 0}, Shape{64, 5, 0}, Shape{128, 2, 0}, Shape{256, 1, 0},
                            Shape{12, 5, 0}, Shape{4, 9, 0}, Shape{32, 4, 1}, Shape{64, 3, 2}}) {
    const int64_t gs = shape.gs, cols = gs * shape.groups;
    REQUIRE(detail::amx_int8_takes_group_size(gs));
    std::vector<int8_t> w(static_cast<size_t>(rows * cols));
    for (auto& b : w) {
      b = static_cast<int8_t>(shape.extreme == 1   ? 127
                              : shape.extreme == 2 ? -128
                                                   : byte(rng));  // -128 included
    }
    std::vector<float> ws(static_cast<size_t>(rows * shape.groups));
    for (auto& s : ws) s = std::abs(normal(rng)) * 0.01f;
    const QuantizedTensor wt{w, ws, gs};
    for (const int64_t n : {1, 4, 5, 15, 16, 17, 31, 33, 37}) {
      std::vector<int8_t> values;  // i8 [n, cols]
      std::vector<float> scales;   // f32 [n, groups]
      for (int64_t t = 0; t < n; ++t) {
        std::vector<float> x(static_cast<size_t>(cols));
        for (auto& v : x) {
          const float m = float(t % 5 + 1);
          v = shape.extreme == 1 ? m : shape.extreme == 2 ? -m : normal(rng) * m;
        }
        if (t % 7 == 3) std::fill(x.begin(), x.begin() + gs, 0.0f);  // an all-zero group
        Q8Vector q;
        q.resize(cols, gs);
        quantize_activations(x, q);
        values.insert(values.end(), q.values.begin(), q.values.end());
        scales.insert(scales.end(), q.scales.begin(), q.scales.end());
      }
      detail::Q8Batch batch;
      batch.values = values.data();
      batch.scales = scales.data();
      batch.n = n;
      batch.cols = cols;
      batch.group_size = gs;
      const Q8BatchView view{values, scales, cols, gs};
      for (const auto& [r0, r1] :
           {std::pair<int64_t, int64_t>{0, rows}, {3, 40}, {7, 8}, {5, 69}, {16, 32}, {1, 66}}) {
        INFO("group size " << gs << ", cols " << cols << ", vectors " << n << ", rows [" << r0
                           << ", " << r1 << "), extreme " << shape.extreme);
        const auto size = static_cast<size_t>(n * stride);
        for (const Chain chain : {Chain::runq_c, Chain::q4_0}) {
          INFO((chain == Chain::runq_c ? "runq.c's chain" : "Q4_0's chain"));
          std::vector<float> want(size, -1.0f);
          if (chain == Chain::runq_c) {
            q8_matmat_rows(want, stride, wt, view, r0, r1, KernelSet::portable);
          } else {
            q4_order_loops(want, stride, wt, batch, r0, r1);
          }
          std::vector<float> got(size, -1.0f);
          test::AmxTileModel model;
          if (chain == Chain::runq_c) {
            detail::int8_tiles::matmat<test::AmxTileModel, Chain::runq_c>(model, got.data(), stride,
                                                                          wt, batch, r0, r1);
          } else {
            detail::int8_tiles::matmat<test::AmxTileModel, Chain::q4_0>(model, got.data(), stride,
                                                                        wt, batch, r0, r1);
          }
          CHECK(got == want);
          // One configuration and release a call; a tile product per 16 rows,
          // 16 tokens and 64 bytes of a group (or the whole group).
          CHECK(model.configures == 1);
          CHECK(model.releases == 1);
          const int64_t per_group = (gs + 63) / 64;
          CHECK(model.multiplies ==
                (r1 - r0 + 15) / 16 * ((n + 15) / 16) * shape.groups * per_group);
          if (real) {
            std::fill(got.begin(), got.end(), -1.0f);
            if (chain == Chain::runq_c) {
              detail::q8_matmat_rows_amx(got, stride, wt, batch, r0, r1);
            } else {
              detail::q8_matmat_rows_q4_order_amx(got, stride, wt, batch, r0, r1);
            }
            CHECK(got == want);
          }
        }
      }
    }
  }
}

TEST_CASE("amx_int8_enabled: the CPU's tiles, unless LLAMA_Q8_KERNEL=avx512-vnni", "[q8][amx]") {
  {
    const test::ScopedEnv unset("LLAMA_Q8_KERNEL", nullptr);
    CHECK(amx_int8_enabled() == cpu_tiles());
  }
  const test::ScopedEnv force("LLAMA_Q8_KERNEL", "avx512-vnni");
  CHECK_FALSE(amx_int8_enabled());
  if (!cpu_tiles()) WARN("this CPU (or its OS) gives no AMX-INT8 tiles: they are never enabled");
}

TEST_CASE("the model of the tiles refuses shapes the CPU would not multiply", "[q8][amx]") {
  // The model is what checks the kernel's schedule where the CPU has no tiles:
  // it must fail on what the CPU would fault on.
  test::AmxTileModel model;
  CHECK_THROWS_WITH(model.zero(0), "tile 0 used unconfigured");
  auto c = detail::int8_tiles::config(32);
  model.configure(c);
  int8_t bytes[16 * 64] = {};
  model.load_weights(bytes, 64);
  model.load_batch(bytes);
  CHECK_NOTHROW(model.multiply(1));
  c.rows[6] = 7;  // 32 bytes of A a row need 8 rows of B
  model.configure(c);
  CHECK_THROWS_WITH(model.multiply(0), "tdpbssd: the tile shapes do not chain");
  c.rows[4] = 17;
  CHECK_THROWS_WITH(model.configure(c), "tile config: tile 4 has a bad shape");
  CHECK_THROWS_WITH(model.multiply(2), "sum tile 2");
}
