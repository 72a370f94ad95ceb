// What this CPU (and the operating system) lets the kernels use, found once at
// run time by cpuid, and the SIMD level every dispatched kernel is chosen by.
// The binary is compiled for x86-64-v2 (CMakeLists.txt); kernels compiled for
// more (llama/kernels/simd_target.hpp) run only where this says they may, so
// one binary runs on any x86-64-v2 CPU and takes the best path on each.
#pragma once

#include <string>
#include <vector>

namespace llama {

struct CpuFeatures {
  std::string vendor;  // "AuthenticAMD", "GenuineIntel"; empty off x86
  std::string brand;   // the processor brand string, e.g. "AMD EPYC"
  // The instruction set extensions cpuid reports...
  bool sse42 = false, popcnt = false, avx = false, avx2 = false, fma = false, f16c = false;
  bool bmi1 = false, bmi2 = false, lzcnt = false, movbe = false;
  bool avx512f = false, avx512bw = false, avx512vl = false, avx512dq = false, avx512cd = false;
  bool avx512vnni = false, avx512bf16 = false, avx512fp16 = false, avx_vnni = false;
  bool amx_tile = false, amx_int8 = false, amx_bf16 = false;
  // ...and whether the OS saves the registers they need (XCR0): ymm for AVX,
  // opmask + zmm for AVX-512, tile config + data for AMX. For AMX, Linux also
  // wants the process to ask first (arch_prctl ARCH_REQ_XCOMP_PERM), which
  // detection does once: amx_permitted says it was granted.
  bool os_ymm = false, os_zmm = false, os_tiles = false, amx_permitted = false;

  // Each extension by its usual name with whether kernels may use it (the CPU
  // has it and the OS state allows it), in a fixed order.
  std::vector<std::pair<std::string, bool>> list() const;
};

// Detected once per process (thread-safe); the same object afterwards.
const CpuFeatures& cpu_features();

// The SIMD levels kernels come in, each the x86-64 microarchitecture level
// it needs: portable (x86-64-v2, plain C++ the compiler vectorizes with SSE),
// avx2 (x86-64-v3: AVX2, FMA, F16C, BMI), avx512 (x86-64-v4: AVX-512 F, BW,
// VL, DQ, CD). Extensions beyond a level (VNNI, BF16, AMX) are checked by the
// kernels that use them, in CpuFeatures.
enum class SimdLevel { portable, avx2, avx512 };
inline constexpr SimdLevel kSimdLevels[] = {SimdLevel::portable, SimdLevel::avx2,
                                            SimdLevel::avx512};
const char* to_string(SimdLevel level);  // "portable", "avx2", "avx512"

// True when this CPU and OS can run kernels of `level`.
bool simd_level_supported(SimdLevel level);
// The best supported level, lowered by LLAMA_CPU_LEVEL=portable|avx2|avx512 in
// the environment (to run the slower paths end to end; a level above what the
// CPU supports, or an unknown name, is ignored). Read once per process.
SimdLevel simd_level();
// `level` if this CPU runs it, else the best level below it that it does.
SimdLevel runnable_level(SimdLevel level);
// Why simd_level() is what it is: "avx512 (x86-64-v4: the best this CPU
// runs)", "portable (LLAMA_CPU_LEVEL=portable; the CPU runs avx512)".
std::string describe_simd_level();

// For --version: the CPU, the extensions found and those missing, the level.
std::string describe_cpu();

}  // namespace llama
