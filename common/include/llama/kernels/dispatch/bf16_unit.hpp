// Whether this CPU's bf16 dot-product unit beats its f32 FMAs, which decides
// whether --numerics fast takes the bf16 batch path (half_products.hpp).
// fast means activations *may* be rounded to bf16 for speed; where the bf16
// unit is not faster (Intel cores without AMX run vdpbf16ps zmm at half the
// f32 FMA FLOP rate) the exact kernels are both faster and more accurate, so
// fast runs those. Measured once per process (a few hundred microseconds on
// one core, on first use); LLAMA_BF16_UNIT=on|off|probe overrides it.
#pragma once

#include <string>
#include <string_view>

namespace llama {

// The bf16 path is taken from this ratio of bf16 dot-product FLOP/s to f32
// FMA FLOP/s up. Zen 5 issues vdpbf16ps at the FMA's instruction rate, so
// twice the FLOPs; Intel Xeon cores without AMX reach half the FMA's FLOPs,
// and there oneDNN's bf16 brgemm runs prefill slower than the f32 kernels.
// Above 1 the bf16 path must also pay for rounding the batch and oneDNN's
// call overhead, hence a margin.
inline constexpr double kBf16UnitFasterRatio = 1.25;

// What a choice rests on.
enum class Bf16UnitBasis { setting, no_bf16, amx, measured };

struct Bf16UnitChoice {
  bool faster = false;  // whether fast numerics should take the bf16 unit
  double ratio = 0;     // measured bf16 / f32 FLOP rate; 0 when not measured
  Bf16UnitBasis basis = Bf16UnitBasis::no_bf16;
  std::string why;  // "0.50x the f32 FMA FLOP rate (measured)", "LLAMA_BF16_UNIT=on", ...
};

// vdpbf16ps zmm FLOP/s over vfmadd231ps zmm FLOP/s on one core (independent
// accumulators, min of alternated runs), measured on the first call
// (thread-safe) and the same number afterwards; 0 on a CPU without
// AVX512-BF16.
double bf16_dot_flops_per_f32_fma_flop();

// The choice for an override value `setting` ("", "probe", "on", "off"), a
// CPU with (has_bf16) AVX512-BF16 and (has_amx) usable AMX-BF16 tiles, and
// `measure` giving bf16_dot_flops_per_f32_fma_flop() (called only when the
// choice needs it). AMX-BF16 counts as faster unmeasured: its tiles dwarf the
// vector FMAs. Throws Error naming LLAMA_BF16_UNIT for another setting.
Bf16UnitChoice choose_bf16_unit(std::string_view setting, bool has_bf16, bool has_amx,
                                double (*measure)());

// choose_bf16_unit for this CPU and LLAMA_BF16_UNIT, read on every call (as
// LLAMA_Q8_KERNEL is) so that tests can set it around a backend's prepare.
// Each setting's choice is made once per process: half_batch_path asks on
// every fast product, so a call costs a getenv, not a string built.
const Bf16UnitChoice& bf16_unit();

// For --version: "bf16 unit: 0.50x f32 FMA (measured), fast numerics runs
// f32 kernels".
std::string describe_bf16_unit();

}  // namespace llama
