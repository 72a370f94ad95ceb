// The tests' own reading of cpuid, XCR0, the kernel's xfeature masks and
// /proc/cpuinfo (cpu_witness.hpp). Written from the vendors' tables, not from
// dispatch/cpu_features.cpp, so that a wrong leaf, register or bit there is caught.
#include "cpu_witness.hpp"

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string_view>

#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace llama::test {
namespace {

constexpr uint64_t kYmm = 0x6;          // SSE, AVX
constexpr uint64_t kZmm = kYmm | 0xe0;  // opmask, ZMM_Hi256, Hi16_ZMM
constexpr uint64_t kTiles = 0x60000;    // XTILECFG, XTILEDATA
constexpr uint64_t kTileData = 1u << 18;

struct Regs {
  uint32_t a = 0, b = 0, c = 0, d = 0;
};

#if defined(__x86_64__)
Regs raw_cpuid(uint32_t leaf, uint32_t subleaf) {
  Regs r;
  __asm__ volatile("cpuid" : "=a"(r.a), "=b"(r.b), "=c"(r.c), "=d"(r.d) : "a"(leaf), "c"(subleaf));
  return r;
}

Regs cpuid(uint32_t leaf, uint32_t subleaf) {
  const uint32_t top = leaf & 0x80000000u;
  if (raw_cpuid(top, 0).a < leaf) return Regs{};
  if (leaf == 7 && subleaf > raw_cpuid(7, 0).a) return Regs{};
  return raw_cpuid(leaf, subleaf);
}
#else
Regs cpuid(uint32_t, uint32_t) { return Regs{}; }
#endif

std::optional<uint64_t> arch_prctl_mask([[maybe_unused]] long code) {
#if defined(__linux__) && defined(__x86_64__) && defined(SYS_arch_prctl)
  unsigned long mask = 0;
  if (syscall(SYS_arch_prctl, code, &mask) != 0) return std::nullopt;
  return mask;
#else
  return std::nullopt;
#endif
}

}  // namespace

std::string CpuidFlag::where() const {
  std::ostringstream s;
  s << "cpuid " << std::hex << std::uppercase << leaf << std::dec << "." << subleaf << " e" << reg
    << "x bit " << bit;
  return s.str();
}

const std::vector<CpuidFlag>& cpuid_flags() {
  static const std::vector<CpuidFlag> flags = {
      {"sse4.2", "sse4_2", 1, 0, 'c', 20, 0, false},
      {"popcnt", "popcnt", 1, 0, 'c', 23, 0, false},
      {"avx", "avx", 1, 0, 'c', 28, kYmm, false},
      {"avx2", "avx2", 7, 0, 'b', 5, kYmm, false},
      {"fma", "fma", 1, 0, 'c', 12, kYmm, false},
      {"f16c", "f16c", 1, 0, 'c', 29, kYmm, false},
      {"bmi2", "bmi2", 7, 0, 'b', 8, 0, false},
      {"avx-vnni", "avx_vnni", 7, 1, 'a', 4, kYmm, false},
      {"avx512f", "avx512f", 7, 0, 'b', 16, kZmm, false},
      {"avx512bw", "avx512bw", 7, 0, 'b', 30, kZmm, false},
      {"avx512vl", "avx512vl", 7, 0, 'b', 31, kZmm, false},
      {"avx512dq", "avx512dq", 7, 0, 'b', 17, kZmm, false},
      {"avx512cd", "avx512cd", 7, 0, 'b', 28, kZmm, false},
      {"avx512-vnni", "avx512_vnni", 7, 0, 'c', 11, kZmm, false},
      {"avx512-bf16", "avx512_bf16", 7, 1, 'a', 5, kZmm, false},
      {"avx512-fp16", "avx512_fp16", 7, 0, 'd', 23, kZmm, false},
      {"amx-tile", "amx_tile", 7, 0, 'd', 24, kTiles, true},
      {"amx-int8", "amx_int8", 7, 0, 'd', 25, kTiles, true},
      {"amx-bf16", "amx_bf16", 7, 0, 'd', 22, kTiles, true},
  };
  return flags;
}

bool cpuid_bit(uint32_t leaf, uint32_t subleaf, char reg, int bit) {
  const Regs r = cpuid(leaf, subleaf);
  const uint32_t v = reg == 'a' ? r.a : reg == 'b' ? r.b : reg == 'c' ? r.c : r.d;
  return ((v >> bit) & 1u) != 0;
}

uint64_t read_xcr0() {
#if defined(__x86_64__)
  if (!cpuid_bit(1, 0, 'c', 27)) return 0;  // OSXSAVE
  uint32_t lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (uint64_t{hi} << 32) | lo;
#else
  return 0;
#endif
}

std::optional<uint64_t> kernel_xfeatures_supported() { return arch_prctl_mask(0x1021); }
std::optional<uint64_t> kernel_xfeatures_permitted() { return arch_prctl_mask(0x1022); }

FlagWitness witness(const CpuidFlag& f) {
  FlagWitness w;
  w.cpuid = cpuid_bit(f.leaf, f.subleaf, f.reg, f.bit);
  w.state = (read_xcr0() & f.xcr0) == f.xcr0;
  if (f.amx) {
    const auto perm = kernel_xfeatures_permitted();
    w.permitted = perm && (*perm & kTileData) != 0;
  }
  return w;
}

bool witness_lzcnt() { return cpuid_bit(0x80000001u, 0, 'c', 5); }

namespace {

// What witness() says of cpuid_flags()'s entry `name`.
bool usable(std::string_view name) {
  for (const CpuidFlag& f : cpuid_flags()) {
    if (f.name == name) return witness(f).usable();
  }
  throw std::logic_error("cpu_witness: no flag " + std::string(name));
}

}  // namespace

// The table's entries carry their XCR0 state (YMM for the AVX family, ZMM for
// AVX-512); BMI1 (7.0 ebx bit 3), LZCNT and MOVBE (1.0 ecx bit 22) need none.
bool witness_x86_64_v3() {
  return usable("avx") && usable("avx2") && usable("fma") && usable("f16c") && usable("bmi2") &&
         cpuid_bit(7, 0, 'b', 3) && witness_lzcnt() && cpuid_bit(1, 0, 'c', 22);
}

bool witness_x86_64_v4() {
  return witness_x86_64_v3() && usable("avx512f") && usable("avx512bw") && usable("avx512vl") &&
         usable("avx512dq") && usable("avx512cd");
}

std::set<std::string> cpuinfo_flags() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) != 0) continue;
    std::istringstream words(line.substr(line.find(':') + 1));
    std::set<std::string> flags;
    for (std::string w; words >> w;) flags.insert(w);
    return flags;
  }
  return {};
}

}  // namespace llama::test
