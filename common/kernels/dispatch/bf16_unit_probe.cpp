// The bf16 unit probe and the choice it feeds (dispatch/bf16_unit.hpp): vdpbf16ps zmm
// against vfmadd231ps zmm, timed on the calling core.
#include "llama/kernels/dispatch/bf16_unit.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "llama/error.hpp"
#include "llama/kernels/dispatch/cpu_features.hpp"
#include "llama/kernels/products/half_products.hpp"
#include "llama/kernels/x86/simd_target.hpp"

namespace llama {
namespace {

#if LLAMA_HAVE_X86_TARGETS
// 16 independent accumulators (zmm0-15) from two zeroed sources: enough to
// hide the latency of either instruction at the widest issue rate known (Zen
// 5: 2 a cycle, latency 4-6), so each loop measures throughput only. Zeros
// keep denormals and NaNs out. Inline asm: the compiler can neither drop nor
// move the work out of the timed span ("memory"), and the loop is the same
// for both instructions but the one instruction.
// clang-format off
#define LLAMA_PROBE_ONE(INSN, R) INSN " %%zmm16, %%zmm17, %%zmm" #R "\n\t"
#define LLAMA_PROBE_16(INSN)                                                   \
  LLAMA_PROBE_ONE(INSN, 0) LLAMA_PROBE_ONE(INSN, 1) LLAMA_PROBE_ONE(INSN, 2)   \
  LLAMA_PROBE_ONE(INSN, 3) LLAMA_PROBE_ONE(INSN, 4) LLAMA_PROBE_ONE(INSN, 5)   \
  LLAMA_PROBE_ONE(INSN, 6) LLAMA_PROBE_ONE(INSN, 7) LLAMA_PROBE_ONE(INSN, 8)   \
  LLAMA_PROBE_ONE(INSN, 9) LLAMA_PROBE_ONE(INSN, 10) LLAMA_PROBE_ONE(INSN, 11) \
  LLAMA_PROBE_ONE(INSN, 12) LLAMA_PROBE_ONE(INSN, 13) LLAMA_PROBE_ONE(INSN, 14) \
  LLAMA_PROBE_ONE(INSN, 15)
// Zeros into the two sources (vpxord) and the 16 accumulators (a product of zeros).
#define LLAMA_PROBE_LOOP(INSN)                                                          \
  "vpxord %%zmm16, %%zmm16, %%zmm16\n\tvpxord %%zmm17, %%zmm17, %%zmm17\n\t"            \
  LLAMA_PROBE_16("vmulps") "1:\n\t" LLAMA_PROBE_16(INSN) "dec %0\n\tjnz 1b\n\t"
#define LLAMA_PROBE_CLOBBERS                                                               \
  "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", \
  "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "xmm16", "xmm17", "cc", "memory"
// clang-format on

// Seconds for `iters` x 16 instructions of each kind.
__attribute__((target("avx512f,avx512bf16"))) double time_bf16_dots(int64_t iters) {
  const auto t0 = std::chrono::steady_clock::now();
  __asm__ volatile(LLAMA_PROBE_LOOP("vdpbf16ps") : "+r"(iters) : : LLAMA_PROBE_CLOBBERS);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

LLAMA_TARGET_AVX512 double time_f32_fmas(int64_t iters) {
  const auto t0 = std::chrono::steady_clock::now();
  __asm__ volatile(LLAMA_PROBE_LOOP("vfmadd231ps") : "+r"(iters) : : LLAMA_PROBE_CLOBBERS);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double measure() {
  const CpuFeatures& f = cpu_features();
  if (!f.avx512bf16 || !f.avx512f || !f.os_zmm) return 0;
  // 4000 x 16 instructions: ~10 us of FMAs at 2 a cycle, ~40 us of bf16 dots
  // at 0.5 a cycle. One discarded round first brings the core to its AVX-512
  // clock; then the kinds alternate and the fastest run of each counts, so
  // an interruption (a shared or virtual core) lengthens a run but cannot
  // flip the ratio. About 0.4 ms in all.
  constexpr int64_t kIters = 4000;
  constexpr int kRounds = 7;
  time_f32_fmas(kIters);
  time_bf16_dots(kIters);
  double fma = 1e30, dot = 1e30;
  for (int i = 0; i < kRounds; ++i) {
    fma = std::min(fma, time_f32_fmas(kIters));
    dot = std::min(dot, time_bf16_dots(kIters));
  }
  if (!(fma > 0) || !(dot > 0)) return 0;
  // A vdpbf16ps zmm is 32 products and 32 sums, a vfmadd231ps zmm 16 of each.
  return (64.0 / dot) / (32.0 / fma);
}
#else
double measure() { return 0; }
#endif

std::string ratio_text(double ratio) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2fx", ratio);
  return buf;
}

}  // namespace

double bf16_dot_flops_per_f32_fma_flop() {
  static const double ratio = measure();
  return ratio;
}

Bf16UnitChoice choose_bf16_unit(std::string_view setting, bool has_bf16, bool has_amx,
                                double (*measure_ratio)()) {
  using B = Bf16UnitBasis;
  if (setting == "on") return {true, 0, B::setting, "LLAMA_BF16_UNIT=on"};
  if (setting == "off") return {false, 0, B::setting, "LLAMA_BF16_UNIT=off"};
  if (!setting.empty() && setting != "probe") {
    throw Error("LLAMA_BF16_UNIT: unknown value '" + std::string(setting) + "' (on, off or probe)");
  }
  if (!has_bf16) return {false, 0, B::no_bf16, "the CPU lacks AVX512-BF16"};
  if (has_amx) return {true, 0, B::amx, "AMX-BF16 tiles (not measured: they dwarf the FMAs)"};
  const double r = measure_ratio();
  return {r >= kBf16UnitFasterRatio, r, B::measured,
          "this CPU's vdpbf16ps runs " + ratio_text(r) + " the f32 FMA FLOP rate (measured)"};
}

const Bf16UnitChoice& bf16_unit() {
  const auto choose = [](std::string_view setting) {
    const CpuFeatures& f = cpu_features();
    return choose_bf16_unit(setting, f.avx512bf16 && f.avx512f && f.os_zmm,
                            f.amx_bf16 && f.os_tiles && f.amx_permitted,
                            bf16_dot_flops_per_f32_fma_flop);
  };
  const char* env = std::getenv("LLAMA_BF16_UNIT");
  const std::string_view setting = env == nullptr ? "" : env;
  if (setting == "on") {
    static const Bf16UnitChoice on = choose("on");
    return on;
  }
  if (setting == "off") {
    static const Bf16UnitChoice off = choose("off");
    return off;
  }
  if (!setting.empty() && setting != "probe") choose(setting);  // throws: an unknown value
  static const Bf16UnitChoice probed = choose("probe");
  return probed;
}

std::string describe_bf16_unit() {
  const Bf16UnitChoice& c = bf16_unit();
  std::string unit;
  if (c.basis == Bf16UnitBasis::measured) {
    unit = ratio_text(c.ratio) + " f32 FMA (measured)";
  } else if (c.basis == Bf16UnitBasis::amx) {
    unit = "AMX-BF16 tiles (not measured)";
  } else {
    unit = c.why;
  }
  const HalfPath fast = half_batch_path(BlockKind::bf16, best_kernel_set(), Numerics::fast);
  const HalfPath exact = half_batch_path(BlockKind::bf16, best_kernel_set(), Numerics::exact);
  return "bf16 unit: " + unit + ", fast numerics runs " +
         (half_path_is_fast(fast) ? std::string("bf16 kernels (") + to_string(fast) + ")"
                                  : std::string("f32 kernels")) +
         (half_path_reads_bf16(exact)
              ? std::string(", exact numerics three exact bf16 planes (") + to_string(exact) + ")"
              : std::string());
}

}  // namespace llama
