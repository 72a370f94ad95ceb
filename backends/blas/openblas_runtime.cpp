// OpenBLAS kernel selection.
//
// Debian's OpenBLAS 0.3.21 is built with DYNAMIC_ARCH and picks its kernels in
// a library constructor, reading OPENBLAS_CORETYPE, before main() and before
// any constructor of ours. On CPUs newer than it knows (e.g. Sapphire Rapids)
// it falls back to generic Prescott kernels: sgemm ~5x and sgemv ~30% slower.
// The only hook that runs earlier is the executable's .preinit_array, but
// there libc has not set up its environment yet (a setenv there is lost). So
// when the variable is unset and the CPU has AVX-512 or AVX2, the preinit
// hook re-executes the program once with OPENBLAS_CORETYPE set to the best
// matching OpenBLAS core; a value the user set is left alone. Set
// LLAMA_OPENBLAS_AUTO=0 to disable it (valgrind runs are detected and skipped).
#include "openblas_runtime.hpp"

#include <cblas.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

extern "C" {
char* openblas_get_config();
char* openblas_get_corename();
void openblas_set_num_threads(int);
}

namespace llama::blas {
namespace {

constexpr const char kCoreVar[] = "OPENBLAS_CORETYPE";
constexpr const char kMarkVar[] = "LLAMA_OPENBLAS_AUTO";

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

std::string openblas_description() {
  std::string s = openblas_get_config();
  s += " (core type ";
  s += openblas_get_corename();
  const char* mark = std::getenv(kMarkVar);
  if (mark != nullptr && std::strcmp(mark, "1") == 0) {
    s += ", auto-selected via OPENBLAS_CORETYPE";
  } else if (std::getenv(kCoreVar) != nullptr) {
    s += ", from OPENBLAS_CORETYPE";
  } else {
    s += ", detected by OpenBLAS";
  }
  s += ")";
  return s;
}

void openblas_set_threads(int threads) { openblas_set_num_threads(threads); }

}  // namespace llama::blas
