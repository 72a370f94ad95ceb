// KernelSet::avx_vnni's Q4_K, Q5_K and Q6_K body: gguf_kquant_avx2.cpp compiled for AVX2
// with AVX-VNNI (x86/avx2_body.hpp says why and what differs).
#define LLAMA_AVX2_BODY_VNNI 1
#include "kernels/x86/gguf_kquant_avx2.cpp"
