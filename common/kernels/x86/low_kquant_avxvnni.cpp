// KernelSet::avx_vnni's Q3_K and Q2_K body: low_kquant_avx2.cpp compiled for AVX2
// with AVX-VNNI (x86/avx2_body.hpp says why and what differs).
#define LLAMA_AVX2_BODY_VNNI 1
#include "kernels/x86/low_kquant_avx2.cpp"
