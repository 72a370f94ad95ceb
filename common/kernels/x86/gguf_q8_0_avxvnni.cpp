// KernelSet::avx_vnni's Q8_0 and Q4_0 decode body: gguf_q8_0_avx2.cpp compiled for AVX2
// with AVX-VNNI (x86/avx2_body.hpp says why and what differs).
#define LLAMA_AVX2_BODY_VNNI 1
#include "kernels/x86/gguf_q8_0_avx2.cpp"
