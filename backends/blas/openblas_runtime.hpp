// OpenBLAS's runtime: which kernels it runs, thread count, and the names of the
// variables the start-up step (openblas_startup.cpp) reads and sets.
#pragma once

#include <string>

namespace llama::blas {

inline constexpr char kCoreVar[] = "OPENBLAS_CORETYPE";
inline constexpr char kMarkVar[] = "LLAMA_OPENBLAS_AUTO";  // 1: set by the start-up step

// e.g. "OpenBLAS 0.3.21 DYNAMIC_ARCH ... Cooperlake (core type Cooperlake, auto-selected)"
std::string openblas_description();
void openblas_set_threads(int threads);

}  // namespace llama::blas
