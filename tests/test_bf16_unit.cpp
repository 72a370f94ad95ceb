// The bf16 unit probe and the fast policy's choice it feeds (dispatch/bf16_unit.hpp):
// the choice for every override and measured ratio, the probe's number on
// this CPU, half_batch_path and --explain under LLAMA_BF16_UNIT=on and off,
// and the --version line.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <iostream>

#include "llama/kernels/dispatch/bf16_unit.hpp"
#include "llama/kernels/dispatch/cpu_features.hpp"
#include "llama/kernels/products/half_products.hpp"
#include "test_support.hpp"

using namespace llama;
using Catch::Contains;

namespace {

int g_measured = 0;  // how often choose_bf16_unit called its measure
double measure_half() { return ++g_measured, 0.5; }
double measure_two() { return ++g_measured, 2.0; }
double measure_at_threshold() { return ++g_measured, kBf16UnitFasterRatio; }
double measure_below_threshold() { return ++g_measured, kBf16UnitFasterRatio - 0.01; }

// What half_batch_path(bf16, best, fast) must be when the unit counts as
// `faster`: amx-bf16 where the CPU runs it, else onednn-bf16 where it runs
// that, else exact's batch path.
HalfPath expected_fast_path(bool faster) {
  const KernelSet k = best_kernel_set();
  const HalfPath decode = half_decode_path(k);
  if (decode == HalfPath::portable || decode == HalfPath::avx2) return decode;
  if (!faster) return HalfPath::avx512;
  if (half_path_available(HalfPath::amx_bf16)) return HalfPath::amx_bf16;
  if (half_path_available(HalfPath::onednn_bf16)) return HalfPath::onednn_bf16;
  return HalfPath::avx512;
}

bool cpu_has_bf16() {
  const CpuFeatures& f = cpu_features();
  return f.avx512bf16 && f.avx512f && f.os_zmm;
}

}  // namespace

TEST_CASE("choose_bf16_unit: overrides, AMX, and the measured threshold", "[bf16-unit]") {
  g_measured = 0;
  for (const bool bf16 : {false, true}) {
    for (const bool amx : {false, true}) {
      INFO("bf16 " << bf16 << ", amx " << amx);
      const Bf16UnitChoice on = choose_bf16_unit("on", bf16, amx, measure_half);
      CHECK(on.faster);
      CHECK(on.why == "LLAMA_BF16_UNIT=on");
      CHECK(on.basis == Bf16UnitBasis::setting);
      const Bf16UnitChoice off = choose_bf16_unit("off", bf16, amx, measure_two);
      CHECK_FALSE(off.faster);
      CHECK(off.why == "LLAMA_BF16_UNIT=off");
      CHECK_THROWS_WITH(choose_bf16_unit("yes", bf16, amx, measure_two),
                        "LLAMA_BF16_UNIT: unknown value 'yes' (on, off or probe)");
    }
  }
  CHECK(g_measured == 0);  // an override measures nothing
  for (const char* setting : {"", "probe"}) {
    INFO("setting '" << setting << "'");
    const Bf16UnitChoice none = choose_bf16_unit(setting, false, false, measure_two);
    CHECK_FALSE(none.faster);
    CHECK_THAT(none.why, Contains("lacks AVX512-BF16"));
    const Bf16UnitChoice amx = choose_bf16_unit(setting, true, true, measure_half);
    CHECK(amx.faster);  // tiles count as faster, unmeasured
    CHECK(amx.ratio == 0);
    CHECK(amx.basis == Bf16UnitBasis::amx);
    CHECK(none.basis == Bf16UnitBasis::no_bf16);
    CHECK(g_measured == 0);
    const Bf16UnitChoice slow = choose_bf16_unit(setting, true, false, measure_half);
    CHECK_FALSE(slow.faster);
    CHECK(slow.ratio == 0.5);
    CHECK(slow.basis == Bf16UnitBasis::measured);
    CHECK(slow.why == "this CPU's vdpbf16ps runs 0.50x the f32 FMA FLOP rate (measured)");
    CHECK(choose_bf16_unit(setting, true, false, measure_two).faster);
    CHECK(choose_bf16_unit(setting, true, false, measure_at_threshold).faster);
    CHECK_FALSE(choose_bf16_unit(setting, true, false, measure_below_threshold).faster);
    CHECK(g_measured == 4);
    g_measured = 0;
  }
}

TEST_CASE("the bf16 unit probe measures a finite positive ratio where the CPU has AVX512-BF16",
          "[bf16-unit][cpu]") {
  const double r = bf16_dot_flops_per_f32_fma_flop();
  if (!cpu_has_bf16()) {
    WARN("this CPU lacks AVX512-BF16: only that the probe reports 0 is checked");
    CHECK(r == 0);
    return;
  }
  std::cout << "bf16 unit: vdpbf16ps zmm runs " << r << "x the vfmadd231ps zmm FLOP rate\n";
  CHECK(std::isfinite(r));
  CHECK(r > 0);
  CHECK(r < 16);  // 64 FLOP an instruction against 32: far above 2 is a broken timer
  CHECK(bf16_dot_flops_per_f32_fma_flop() == r);  // measured once
  test::ScopedEnv probe("LLAMA_BF16_UNIT", nullptr);
  const Bf16UnitChoice& c = bf16_unit();
  const CpuFeatures& f = cpu_features();
  if (!(f.amx_bf16 && f.os_tiles && f.amx_permitted)) {
    CHECK(c.ratio == r);
    CHECK(c.faster == (r >= kBf16UnitFasterRatio));
    CHECK_THAT(c.why, Contains("(measured)"));
  }
  CHECK(&bf16_unit() == &c);  // each setting's choice made once
  const test::ScopedEnv bad("LLAMA_BF16_UNIT", "sometimes");
  CHECK_THROWS_WITH(bf16_unit(), Contains("unknown value 'sometimes'"));
}

TEST_CASE("fast numerics' bf16 batch path follows LLAMA_BF16_UNIT", "[bf16-unit][half]") {
  const KernelSet k = best_kernel_set();
  const std::vector<uint16_t> bits(4 * 32, 0x3f80);
  const Tensor w = Tensor::view("w", DType::bf16, {4, 32}, std::as_bytes(std::span(bits)));
  if (!half_path_available(HalfPath::onednn_bf16)) {
    WARN("this CPU lacks " << half_path_requirement(HalfPath::onednn_bf16)
                           << ": LLAMA_BF16_UNIT=on cannot take the bf16 path here");
  }
  for (const char* setting : {"on", "off"}) {
    INFO("LLAMA_BF16_UNIT=" << setting);
    test::ScopedEnv env("LLAMA_BF16_UNIT", setting);
    const HalfPath want = expected_fast_path(setting[1] == 'n');
    CHECK(half_batch_path(BlockKind::bf16, k, Numerics::fast) == want);
    CHECK(batch_rounds_to_bf16(w, k, Numerics::fast) == half_path_is_fast(want));
    CHECK(bf16_batch_layout(k, Numerics::fast) ==
          (want == HalfPath::amx_bf16 ? Bf16Layout::tiles : Bf16Layout::rows));
    CHECK_FALSE(half_path_is_fast(half_batch_path(BlockKind::bf16, k, Numerics::exact)));
    CHECK_FALSE(half_path_is_fast(half_batch_path(BlockKind::f16, k, Numerics::fast)));
    // Exact takes the tiles' three exact planes where the CPU has AMX and the unit is on.
    const bool x3 = setting[1] == 'n' && half_decode_path(k) == HalfPath::avx512 &&
                    half_path_available(HalfPath::amx_bf16x3);
    CHECK(half_batch_path(BlockKind::bf16, k, Numerics::exact) ==
          (x3 ? HalfPath::amx_bf16x3 : expected_fast_path(false)));
    CHECK(batch_rounds_to_bf16(w, k, Numerics::exact) == x3);
    const std::string e = explain_half_batch_path(BlockKind::bf16, k, Numerics::fast);
    CHECK_THAT(e, Contains(std::string(to_string(want)) + " ("));
    // The avx2 level has no bf16 unit to choose, so it names no setting.
    if ((want == HalfPath::avx512 || half_path_is_fast(want)) &&
        half_path_available(HalfPath::onednn_bf16)) {
      CHECK_THAT(e, Contains(std::string("LLAMA_BF16_UNIT=") + setting));
    }
  }
  {
    test::ScopedEnv probe("LLAMA_BF16_UNIT", "probe");
    const HalfPath want = expected_fast_path(bf16_unit().faster);
    CHECK(half_batch_path(BlockKind::bf16, k, Numerics::fast) == want);
    if (want == HalfPath::avx512 && half_path_available(HalfPath::onednn_bf16) &&
        bf16_unit().ratio > 0) {
      CHECK_THAT(explain_half_batch_path(BlockKind::bf16, k, Numerics::fast),
                 Contains("avx512-f32 (fast numerics, but this CPU's vdpbf16ps runs") &&
                     Contains("(measured): exact kernels are faster"));
    }
  }
  test::ScopedEnv bad("LLAMA_BF16_UNIT", "fastest");
  const bool avx512 = half_decode_path(k) == HalfPath::avx512;
  if (avx512 && half_path_available(HalfPath::onednn_bf16)) {
    CHECK_THROWS_WITH(half_batch_path(BlockKind::bf16, k, Numerics::fast),
                      Contains("LLAMA_BF16_UNIT: unknown value 'fastest'"));
  }
  // Exact asks the setting only where it could take amx-bf16x3.
  if (avx512 && half_path_available(HalfPath::amx_bf16x3)) {
    CHECK_THROWS_WITH(half_batch_path(BlockKind::bf16, k, Numerics::exact),
                      Contains("LLAMA_BF16_UNIT: unknown value 'fastest'"));
  } else {
    CHECK_FALSE(half_path_reads_bf16(half_batch_path(BlockKind::bf16, k, Numerics::exact)));
  }
}

TEST_CASE("llama-cli --version names the bf16 unit and what fast runs", "[bf16-unit][cli]") {
  for (const char* setting : {"on", "off"}) {
    test::ScopedEnv env("LLAMA_BF16_UNIT", setting);
    const auto r = test::run_llama_cli({"--version"});
    INFO(setting << ": " << r.out << r.err);
    CHECK(r.exit_code == 0);
    const HalfPath fast = expected_fast_path(setting[1] == 'n');
    CHECK_THAT(
        r.out,
        Contains(std::string("bf16 unit: LLAMA_BF16_UNIT=") + setting + ", fast numerics runs " +
                 (half_path_is_fast(fast) ? std::string("bf16 kernels (") + to_string(fast) + ")"
                                          : std::string("f32 kernels"))));
  }
  {
    test::ScopedEnv probe("LLAMA_BF16_UNIT", nullptr);
    const auto r = test::run_llama_cli({"--version"});
    INFO(r.out << r.err);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Contains("bf16 unit: "));
    if (cpu_has_bf16() && bf16_unit().ratio > 0) {
      // The child measured its own ratio: only its form is known here.
      CHECK_THAT(r.out, Contains("x f32 FMA (measured), fast numerics runs "));
    }
  }
  test::ScopedEnv bad("LLAMA_BF16_UNIT", "fastest");
  const auto r = test::run_llama_cli({"--version"});
  CHECK(r.exit_code != 0);
  CHECK_THAT(r.err, Contains("LLAMA_BF16_UNIT: unknown value 'fastest' (on, off or probe)"));
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
}
