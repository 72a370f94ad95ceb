// CPU feature detection by cpuid and xgetbv, the AMX permission request, and
// the SIMD level dispatched kernels follow (see dispatch/cpu_features.hpp).
#include "llama/kernels/dispatch/cpu_features.hpp"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <sstream>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define LLAMA_X86 1
#endif
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace llama {
namespace {

#if LLAMA_X86
struct Regs {
  uint32_t a = 0, b = 0, c = 0, d = 0;
};

// The one cpuid reader: a leaf above the CPU's maximum (basic or extended)
// reads as zeros (__get_cpuid_count checks the maximum), so callers need no
// maximum-leaf checks of their own.
Regs cpuid(uint32_t leaf, uint32_t sub = 0) {
  Regs r;
  if (__get_cpuid_count(leaf, sub, &r.a, &r.b, &r.c, &r.d) == 0) return Regs{};
  return r;
}

bool bit(uint32_t v, int n) { return ((v >> n) & 1u) != 0; }

// XCR0 (needs OSXSAVE, checked by the caller); xgetbv itself needs no target.
uint64_t xcr0() {
  uint32_t lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (uint64_t{hi} << 32) | lo;
}

// Linux keeps AMX tile data off until a process asks (arch/x86/include/uapi/asm/prctl.h).
bool request_amx_permission() {
#if defined(__linux__) && defined(SYS_arch_prctl)
  constexpr long kArchReqXcompPerm = 0x1023, kArchGetXcompPerm = 0x1022, kXfeatureXtiledata = 18;
  if (syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) != 0) return false;
  unsigned long granted = 0;
  if (syscall(SYS_arch_prctl, kArchGetXcompPerm, &granted) != 0) return false;
  return ((granted >> kXfeatureXtiledata) & 1ul) != 0;
#else
  return false;
#endif
}

CpuFeatures detect() {
  CpuFeatures f;
  const Regs r0 = cpuid(0);
  char vendor[13] = {};
  std::memcpy(vendor, &r0.b, 4);
  std::memcpy(vendor + 4, &r0.d, 4);
  std::memcpy(vendor + 8, &r0.c, 4);
  f.vendor = vendor;
  char brand[49] = {};  // leaves 0x80000002..4, zeros where the CPU has none
  for (uint32_t i = 0; i < 3; ++i) {
    const Regs r = cpuid(0x80000002 + i);
    std::memcpy(brand + 16 * i, &r, 16);
  }
  f.brand = brand;
  const auto first = f.brand.find_first_not_of(' ');
  const auto last = f.brand.find_last_not_of(' ');
  f.brand = first == std::string::npos ? "" : f.brand.substr(first, last - first + 1);
  const Regs r1 = cpuid(1);
  f.sse42 = bit(r1.c, 20);
  f.popcnt = bit(r1.c, 23);
  f.fma = bit(r1.c, 12);
  f.movbe = bit(r1.c, 22);
  f.avx = bit(r1.c, 28);
  f.f16c = bit(r1.c, 29);
  const Regs r7 = cpuid(7, 0);
  f.bmi1 = bit(r7.b, 3);
  f.avx2 = bit(r7.b, 5);
  f.bmi2 = bit(r7.b, 8);
  f.avx512f = bit(r7.b, 16);
  f.avx512dq = bit(r7.b, 17);
  f.avx512cd = bit(r7.b, 28);
  f.avx512bw = bit(r7.b, 30);
  f.avx512vl = bit(r7.b, 31);
  f.avx512vnni = bit(r7.c, 11);
  f.amx_bf16 = bit(r7.d, 22);
  f.avx512fp16 = bit(r7.d, 23);
  f.amx_tile = bit(r7.d, 24);
  f.amx_int8 = bit(r7.d, 25);
  const Regs r71 = cpuid(7, 1);  // zeros past the last sub-leaf (r7.a)
  f.avx_vnni = bit(r71.a, 4);
  f.avx512bf16 = bit(r71.a, 5);
  f.lzcnt = bit(cpuid(0x80000001).c, 5);
  if (bit(r1.c, 27)) {  // OSXSAVE: xgetbv is there
    const uint64_t x = xcr0();
    f.os_ymm = (x & 0x6) == 0x6;                // SSE and AVX state
    f.os_zmm = f.os_ymm && (x & 0xe0) == 0xe0;  // opmask, ZMM_Hi256, Hi16_ZMM
    f.os_tiles = (x & 0x60000) == 0x60000;      // XTILECFG, XTILEDATA
  }
  if (f.amx_tile && f.os_tiles) f.amx_permitted = request_amx_permission();
  return f;
}
#else
CpuFeatures detect() { return CpuFeatures{}; }
#endif

bool level_supported(const CpuFeatures& f, SimdLevel level) {
  const bool v3 =
      f.os_ymm && f.avx && f.avx2 && f.fma && f.f16c && f.bmi1 && f.bmi2 && f.lzcnt && f.movbe;
  switch (level) {
    case SimdLevel::portable:
      return true;
    case SimdLevel::avx2:
      return v3;
    case SimdLevel::avx512:
      return v3 && f.os_zmm && f.avx512f && f.avx512bw && f.avx512vl && f.avx512dq && f.avx512cd;
  }
  return false;
}

SimdLevel best_supported() {
  SimdLevel best = SimdLevel::portable;
  for (SimdLevel l : kSimdLevels) {
    if (level_supported(cpu_features(), l)) best = l;
  }
  return best;
}

struct LevelChoice {
  SimdLevel level = SimdLevel::portable;
  std::string why;
};

LevelChoice choose_level() {
  const SimdLevel best = best_supported();
  LevelChoice c{best, std::string(to_string(best)) + " (the best this CPU runs)"};
  const char* cap = std::getenv("LLAMA_CPU_LEVEL");
  if (cap == nullptr || *cap == '\0') return c;
  for (SimdLevel l : kSimdLevels) {
    if (std::strcmp(cap, to_string(l)) != 0) continue;
    if (l < best) {
      c.level = l;
      c.why = std::string(to_string(l)) + " (LLAMA_CPU_LEVEL=" + cap + "; the CPU runs " +
              to_string(best) + ")";
    } else if (l > best) {
      c.why += std::string("; LLAMA_CPU_LEVEL=") + cap + " ignored: this CPU lacks it";
    }
    return c;
  }
  c.why += std::string("; LLAMA_CPU_LEVEL=") + cap + " ignored: not portable, avx2 or avx512";
  return c;
}

const LevelChoice& level_choice() {
  static const LevelChoice choice = choose_level();
  return choice;
}

}  // namespace

std::vector<std::pair<std::string, bool>> CpuFeatures::list() const {
  const bool z = os_zmm, y = os_ymm, t = os_tiles && amx_permitted;
  return {{"sse4.2", sse42},
          {"popcnt", popcnt},
          {"avx", avx && y},
          {"avx2", avx2 && y},
          {"fma", fma && y},
          {"f16c", f16c && y},
          {"bmi2", bmi2},
          {"avx-vnni", avx_vnni && y},
          {"avx512f", avx512f && z},
          {"avx512bw", avx512bw && z},
          {"avx512vl", avx512vl && z},
          {"avx512dq", avx512dq && z},
          {"avx512cd", avx512cd && z},
          {"avx512-vnni", avx512vnni && z},
          {"avx512-bf16", avx512bf16 && z},
          {"avx512-fp16", avx512fp16 && z},
          {"amx-tile", amx_tile && t},
          {"amx-int8", amx_int8 && t},
          {"amx-bf16", amx_bf16 && t}};
}

const CpuFeatures& cpu_features() {
  static const CpuFeatures features = detect();
  return features;
}

const char* to_string(SimdLevel level) {
  switch (level) {
    case SimdLevel::portable:
      return "portable";
    case SimdLevel::avx2:
      return "avx2";
    case SimdLevel::avx512:
      return "avx512";
  }
  return "?";
}

bool simd_level_supported(SimdLevel level) { return level_supported(cpu_features(), level); }

SimdLevel simd_level() { return level_choice().level; }

SimdLevel runnable_level(SimdLevel level) {
  while (level != SimdLevel::portable && !simd_level_supported(level)) {
    level = static_cast<SimdLevel>(static_cast<int>(level) - 1);
  }
  return level;
}

std::string describe_simd_level() { return level_choice().why; }

std::string describe_cpu() {
  const CpuFeatures& f = cpu_features();
  std::ostringstream s;
  s << "cpu: " << (f.brand.empty() ? "unknown" : f.brand);
  if (!f.vendor.empty()) s << " (" << f.vendor << ")";
  s << "\ncpu features:";
  std::string lacks;
  for (const auto& [name, usable] : f.list()) {
    if (usable) {
      s << ' ' << name;
    } else {
      lacks += ' ' + name;
    }
  }
  s << "\ncpu lacks:" << (lacks.empty() ? " nothing listed" : lacks);
  if (f.amx_tile && !f.amx_permitted) {
    s << " (amx: the CPU has tiles but "
      << (f.os_tiles ? "the kernel refused" : "the OS does not enable") << " tile data)";
  }
  s << "\nsimd level: " << describe_simd_level();
  return s.str();
}

}  // namespace llama
