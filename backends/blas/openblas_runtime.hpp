// OpenBLAS's runtime: which kernels it runs, thread count, and the start-up
// step that gives Debian's OpenBLAS its fast kernels on CPUs it misdetects.
#pragma once

#include <string>

namespace llama::blas {

// e.g. "OpenBLAS 0.3.21 DYNAMIC_ARCH ... Cooperlake (core type Cooperlake, auto-selected)"
std::string openblas_description();
void openblas_set_threads(int threads);

}  // namespace llama::blas
