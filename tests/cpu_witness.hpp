// The tests' own witnesses of what this CPU and kernel allow, read without the
// library's detection (dispatch/cpu_features.cpp), so each can check it:
// - cpuid, executed here and decoded from the vendors' tables (Intel SDM vol. 2A
//   "CPUID", AMD APM vol. 3 appendix E), one bit per extension;
// - XCR0 by xgetbv, and the kernel's own xfeature masks by arch_prctl
//   (ARCH_GET_XCOMP_SUPP, ARCH_GET_XCOMP_PERM; Linux 5.16 and later);
// - /proc/cpuinfo's flags, which a kernel or hypervisor may shorten (a flag it
//   lists is one the CPU reports and whose state the kernel enabled; a flag it
//   leaves out proves nothing).
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace llama::test {

// One extension as CpuFeatures::list() names it, where cpuid reports it and
// which XCR0 state components its registers need.
struct CpuidFlag {
  const char* name;     // CpuFeatures::list()'s name, e.g. "avx512f"
  const char* cpuinfo;  // /proc/cpuinfo's name, e.g. "avx512f"
  uint32_t leaf, subleaf;
  char reg;  // 'a', 'b', 'c' or 'd'
  int bit;
  uint64_t xcr0;              // state components needed (0: none beyond SSE)
  bool amx;                   // tile data: also needs the process's permission
  std::string where() const;  // "cpuid 7.0 ebx bit 16"
};

// Every extension CpuFeatures::list() names, in its order.
const std::vector<CpuidFlag>& cpuid_flags();

// cpuid read here: zeros above the CPU's maximum basic or extended leaf.
bool cpuid_bit(uint32_t leaf, uint32_t subleaf, char reg, int bit);
// XCR0 by xgetbv; 0 where CPUID.1:ECX.OSXSAVE is clear (the OS enables no state).
uint64_t read_xcr0();
// The kernel's masks: xfeatures it supports, and those this process may use.
// Empty where the kernel does not answer (before Linux 5.16, or off Linux/x86).
std::optional<uint64_t> kernel_xfeatures_supported();
std::optional<uint64_t> kernel_xfeatures_permitted();

// What the witnesses say of one extension: the CPU has it and the OS lets this
// process use its registers.
struct FlagWitness {
  bool cpuid = false;     // the CPU reports it
  bool state = false;     // XCR0 enables every state component it needs
  bool permitted = true;  // AMX: the kernel granted this process tile data
  bool usable() const { return cpuid && state && permitted; }
};
FlagWitness witness(const CpuidFlag& f);

// The x86-64 levels from the witnesses: v3 (AVX2, FMA, F16C, BMI1, BMI2, LZCNT,
// MOVBE, with YMM state) and v4 (v3 and AVX-512 F, BW, VL, DQ, CD with ZMM
// state), as the psABI defines them.
bool witness_x86_64_v3();
bool witness_x86_64_v4();
// LZCNT: CPUID.80000001H:ECX bit 5 (Linux's "abm").
bool witness_lzcnt();

// The first "flags" line of /proc/cpuinfo; empty if there is none.
std::set<std::string> cpuinfo_flags();

}  // namespace llama::test
