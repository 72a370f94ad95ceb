# Included by the top-level CMakeLists.txt when LLAMA_FUZZ is ON, before the
# sanitizer flags are applied: coverage instrumentation for every library,
# and AddressSanitizer + UndefinedBehaviorSanitizer unless chosen otherwise.
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "LLAMA_FUZZ needs clang (libFuzzer): -DCMAKE_CXX_COMPILER=clang++-14")
endif()
if(NOT LLAMA_SANITIZE)
  set(LLAMA_SANITIZE "address,undefined")
endif()
add_compile_options(-fsanitize=fuzzer-no-link)
add_compile_options(-Wno-pass-failed)  # "loop not vectorized" notes on omp simd loops
