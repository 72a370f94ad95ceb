// OpenBLAS kernel selection, the executable's half.
//
// Debian's OpenBLAS 0.3.21 is built with DYNAMIC_ARCH and picks its kernels in
// a library constructor, reading OPENBLAS_CORETYPE, before main() and before
// any constructor of ours. On CPUs newer than it knows (e.g. Sapphire Rapids)
// it falls back to generic Prescott kernels, far slower for sgemm and sgemv.
// The only hook that runs earlier is the executable's .preinit_array, but
// there libc has not set up its environment yet (a setenv there is lost). So
// when the variable is unset and the CPU has AVX-512 or AVX2, the preinit
// hook re-executes the program once with OPENBLAS_CORETYPE set to the best
// matching OpenBLAS core; a value the user set is left alone. Set
// LLAMA_OPENBLAS_AUTO=0 to disable it (valgrind runs are detected and skipped).
//
// .preinit_array exists only in executables, so this file is an object library
// (llama_openblas_startup) linked into the apps, not part of the blas backend's
// shared library; openblas_runtime.cpp reports what it did.
#include <unistd.h>

#include <cstring>

#include "openblas_runtime.hpp"

namespace llama::blas {
namespace {

const char* find_env(char** envp, const char* name) {
  const size_t n = std::strlen(name);
  for (char** e = envp; e != nullptr && *e != nullptr; ++e) {
    if (std::strncmp(*e, name, n) == 0 && (*e)[n] == '=') return *e + n + 1;
  }
  return nullptr;
}

const char* best_core() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512bf16")) return "Cooperlake";
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq")) {
    return "SkylakeX";
  }
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
  return nullptr;
}

// Runs from .preinit_array: no libc environment, no allocation, no C++ runtime.
void select_kernels(int /*argc*/, char** argv, char** envp) {
  if (find_env(envp, kCoreVar) != nullptr || find_env(envp, kMarkVar) != nullptr) return;
  const char* preload = find_env(envp, "LD_PRELOAD");
  if (preload != nullptr && std::strstr(preload, "vgpreload") != nullptr) return;  // valgrind
  const char* core = best_core();
  if (core == nullptr) return;

  static char core_entry[64];
  static char mark_entry[] = "LLAMA_OPENBLAS_AUTO=1";
  static char* new_env[4096];
  size_t n = 0;
  for (char** e = envp; *e != nullptr; ++e) {
    if (n + 3 >= sizeof new_env / sizeof *new_env) return;  // huge environment: leave it
    new_env[n++] = *e;
  }
  std::strcpy(core_entry, kCoreVar);
  std::strcat(core_entry, "=");
  std::strcat(core_entry, core);
  new_env[n++] = core_entry;
  new_env[n++] = mark_entry;
  new_env[n] = nullptr;
  ::execve("/proc/self/exe", argv, new_env);
  // On failure carry on with whatever OpenBLAS chose.
}

__attribute__((section(".preinit_array"),
               used)) void (*const kSelectKernels)(int, char**, char**) = select_kernels;

}  // namespace
}  // namespace llama::blas
