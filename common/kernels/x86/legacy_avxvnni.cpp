// KernelSet::avx_vnni's Q5_0, Q4_1 and Q5_1 body: legacy_avx2.cpp compiled for AVX2
// with AVX-VNNI (x86/avx2_body.hpp says why and what differs).
#define LLAMA_AVX2_BODY_VNNI 1
#include "kernels/x86/legacy_avx2.cpp"
