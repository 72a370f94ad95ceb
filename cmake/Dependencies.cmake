# Finds the Debian-packaged dependencies (scripts/install-deps.sh installs them).
set(BLA_VENDOR OpenBLAS)
find_package(BLAS REQUIRED)
# Debian installs one cblas.h per BLAS flavour; take OpenBLAS's own.
find_path(OPENBLAS_INCLUDE_DIR cblas.h openblas_config.h
  PATHS /usr/include/x86_64-linux-gnu/openblas-pthread /usr/include/openblas
        /usr/include/x86_64-linux-gnu/openblas-openmp
  NO_DEFAULT_PATH)
if(NOT OPENBLAS_INCLUDE_DIR)
  find_path(OPENBLAS_INCLUDE_DIR cblas.h openblas_config.h REQUIRED)
endif()
add_library(llama_openblas INTERFACE)
target_link_libraries(llama_openblas INTERFACE ${BLAS_LIBRARIES})
target_include_directories(llama_openblas SYSTEM INTERFACE ${OPENBLAS_INCLUDE_DIR})

find_package(Eigen3 3.3 REQUIRED NO_MODULE)
find_package(TBB REQUIRED)
find_package(Boost 1.71 REQUIRED COMPONENTS program_options)
find_package(nlohmann_json 3.9 REQUIRED)
find_package(Threads REQUIRED)
# PCRE2 (8-bit, with JIT where the platform has it) for tokenizer.json's Split regexes.
find_package(PkgConfig REQUIRED)
pkg_check_modules(PCRE2 REQUIRED IMPORTED_TARGET libpcre2-8)
# cpp-httplib for llama-server (Debian's libcpp-httplib-dev, 0.11.4 in Debian 12: a
# compiled library with a pkg-config file, whose Cflags carry the TLS and compression
# defines the library was built with, so the header matches it).
pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)
# oneDNN (Debian's libdnnl-dev) for bf16 prefill products under fast numerics
# (kernels/products/half_products_onednn.cpp): its bf16 matmul measured about 2x our
# hand-written vdpbf16ps kernel on this project's Zen 5 machine. CPUs with
# AMX-BF16 run our own tile kernel instead (kernels/x86/half_products_amx.cpp,
# 1.2-1.6x oneDNN 2.6's AMX matmul). Its config needs OpenCL's
# headers (Debian's build has a GPU runtime; ocl-icd-opencl-dev). Debian builds
# it on GNU OpenMP: its own runtime, libgomp.so.1 (a dependency of libdnnl2), is
# linked to set the calling thread's team size (omp_set_num_threads), never
# FindOpenMP's, which is LLVM's libomp under clang (a second, unrelated runtime)
# and would add -fopenmp to our sources.
find_package(dnnl 2.6 CONFIG REQUIRED)
find_library(LLAMA_GOMP_LIBRARY NAMES libgomp.so.1 gomp REQUIRED)
