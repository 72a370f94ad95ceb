// The product kernel set: what this CPU runs, and the environment's override.
#include "llama/kernels/dispatch/kernel_set.hpp"

#include <cstdlib>
#include <cstring>
#include <string>

#include "llama/error.hpp"
#include "llama/kernels/dispatch/cpu_features.hpp"
#include "llama/kernels/x86/simd_target.hpp"

namespace llama {

const char* to_string(KernelSet kernel) {
  switch (kernel) {
    case KernelSet::avx512_vnni:
      return "avx512-vnni";
    case KernelSet::avx2:
      return "avx2";
    case KernelSet::avx_vnni:
      return "avx-vnni";
    case KernelSet::portable:
      break;
  }
  return "portable";
}

bool kernel_set_available(KernelSet kernel) {
  if (kernel == KernelSet::portable) return true;
#if LLAMA_HAVE_X86_TARGETS
  if (kernel == KernelSet::avx2) return simd_level_supported(SimdLevel::avx2);
  if (kernel == KernelSet::avx_vnni) {
    return simd_level_supported(SimdLevel::avx2) && cpu_features().avx_vnni;
  }
  return simd_level_supported(SimdLevel::avx512) && cpu_features().avx512vnni;
#else
  return false;
#endif
}

void require_kernel_set(KernelSet kernel, const char* what) {
  if (!kernel_set_available(kernel)) {
    throw Error(std::string(what) + ": the " + to_string(kernel) +
                " kernels were asked for on a CPU without them");
  }
}

KernelSet best_kernel_set() {
  const char* forced = std::getenv("LLAMA_Q8_KERNEL");
  if (forced != nullptr && std::strcmp(forced, "portable") == 0) return KernelSet::portable;
  // LLAMA_CPU_LEVEL below avx512 leaves the VNNI kernel out too.
  if (simd_level() == SimdLevel::avx512 && kernel_set_available(KernelSet::avx512_vnni)) {
    return KernelSet::avx512_vnni;
  }
  if (simd_level() == SimdLevel::portable || !kernel_set_available(KernelSet::avx2)) {
    return KernelSet::portable;
  }
  const bool plain = forced != nullptr && std::strcmp(forced, "avx2") == 0;
  return !plain && kernel_set_available(KernelSet::avx_vnni) ? KernelSet::avx_vnni
                                                             : KernelSet::avx2;
}

bool amx_int8_enabled() {
#if LLAMA_HAVE_X86_TARGETS
  const CpuFeatures& f = cpu_features();
  if (!(f.amx_tile && f.amx_int8 && f.os_tiles && f.amx_permitted)) return false;
  const char* forced = std::getenv("LLAMA_Q8_KERNEL");
  return forced == nullptr || std::strcmp(forced, "avx512-vnni") != 0;
#else
  return false;
#endif
}

}  // namespace llama
