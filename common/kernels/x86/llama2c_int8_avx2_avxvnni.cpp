// KernelSet::avx_vnni's llama2.c int8 decode body: llama2c_int8_avx2.cpp compiled for AVX2
// with AVX-VNNI (x86/avx2_body.hpp says why and what differs).
#define LLAMA_AVX2_BODY_VNNI 1
#include "kernels/x86/llama2c_int8_avx2.cpp"
