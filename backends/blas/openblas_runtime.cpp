// OpenBLAS's runtime as the blas backend sees it: which kernels run (and whether
// openblas_startup.cpp chose them) and the thread count.
#include "openblas_runtime.hpp"

#include <cblas.h>

#include <cstdlib>
#include <cstring>

extern "C" {
char* openblas_get_config();
char* openblas_get_corename();
void openblas_set_num_threads(int);
}

namespace llama::blas {

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
