// KernelSet::avx512_vnni's Q5_0, Q4_1 and Q5_1 body: legacy_avx2.cpp compiled
// for 256-bit registers with AVX-512 VNNI (x86/avx2_body.hpp says why and what
// differs).
#define LLAMA_AVX2_BODY_VNNI 2
#include "kernels/x86/legacy_avx2.cpp"
