// Which set of product kernels a backend runs: the portable loops (the
// reference backend, and the arithmetic order every other set reproduces) or
// this CPU's vector kernels (AVX-512 with VNNI for the int8 products, the
// AVX-512 row kernels for GGUF blocks and bf16/f16). Every product entry point
// (product_table.hpp) takes one; both sets give the same bits.
#pragma once

namespace llama {

enum class KernelSet { portable, avx512_vnni };
const char* to_string(KernelSet kernel);  // "portable", "avx512-vnni"
// True when the set was compiled in and this CPU can run it.
bool kernel_set_available(KernelSet kernel);
// The fastest available set; LLAMA_Q8_KERNEL=portable in the environment
// forces the portable one (to compare the two end to end), and
// LLAMA_CPU_LEVEL below avx512 leaves the vector set out.
KernelSet best_kernel_set();

}  // namespace llama
