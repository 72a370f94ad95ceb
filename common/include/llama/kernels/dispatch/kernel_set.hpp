// Which set of product kernels a backend runs: the portable loops (the
// reference backend, and the arithmetic order every other set reproduces) or
// this CPU's vector kernels: avx512_vnni (AVX-512 with VNNI for the int8
// products, the AVX-512 row kernels for GGUF blocks and bf16/f16) or avx2
// (x86-64-v3: AVX2, FMA, F16C; the GGUF integer dots in 256-bit registers, the
// portable loops for the products it has no body for) or avx_vnni (the avx2
// set's bodies compiled with AVX-VNNI's vpdpbusd/vpdpwssd besides). Every
// product entry point (product_table.hpp) takes one; every set gives the same
// bits.
#pragma once

namespace llama {

enum class KernelSet { portable, avx512_vnni, avx2, avx_vnni };
// "portable", "avx512-vnni", "avx2", "avx-vnni"
const char* to_string(KernelSet kernel);
// True when the set was compiled in and this CPU can run it.
bool kernel_set_available(KernelSet kernel);
// Throws Error ("<what>: the <set> kernels were asked for on a CPU without
// them") unless the set is available: a product entry point given a set this
// CPU cannot run has a bug in its caller, and falling back would hide it.
void require_kernel_set(KernelSet kernel, const char* what);
// The fastest available set: avx512_vnni at the avx512 level on a CPU with
// VNNI, else at a level of avx2 or above avx_vnni on a CPU with AVX-VNNI or
// avx2, else portable. LLAMA_Q8_KERNEL=portable in the environment forces the
// portable one and LLAMA_Q8_KERNEL=avx2 the plain AVX2 bodies instead of
// avx_vnni (to compare them end to end); LLAMA_CPU_LEVEL lowers the level.
// (LLAMA_Q8_KERNEL=avx512-vnni: amx_int8_enabled.)
KernelSet best_kernel_set();

// Whether KernelSet::avx512_vnni's int8 batch products (llama2.c int8, GGUF
// Q8_0 and Q4_0 prompts) run on the AMX-INT8 tiles: the CPU has AMX-INT8, Linux
// granted the tile state (CpuFeatures::amx_permitted) and LLAMA_Q8_KERNEL is
// not avx512-vnni, which keeps the VNNI batch kernels (to compare them end to
// end). Both give the same bits.
bool amx_int8_enabled();

// Whether the set runs the avx2 set's bodies (avx2 and avx_vnni: the same
// source compiled with and without AVX-VNNI).
inline bool runs_avx2_bodies(KernelSet kernel) {
  return kernel == KernelSet::avx2 || kernel == KernelSet::avx_vnni;
}

}  // namespace llama
