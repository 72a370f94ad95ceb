// Function attributes that compile one kernel for one SimdLevel
// (dispatch/cpu_features.hpp), whatever the build's baseline (x86-64-v2). A kernel
// marked with one runs only after simd_level() (or the CpuFeatures check of
// its extension) allows it. Helpers it calls need the same attribute, or none
// (plain inline code is compiled for the caller's target when inlined);
// lambdas do not inherit it, so kernels written with intrinsics use none.
#pragma once

#if defined(__x86_64__) || defined(__i386__)
// x86-64-v3.
#define LLAMA_TARGET_AVX2 __attribute__((target("avx2,fma,f16c,bmi,bmi2,lzcnt,movbe,popcnt")))
// x86-64-v3 with AVX-VNNI (the VEX vpdpbusd/vpdpwssd): KernelSet::avx_vnni.
#define LLAMA_TARGET_AVX2_VNNI \
  __attribute__((target("avx2,fma,f16c,bmi,bmi2,lzcnt,movbe,popcnt,avxvnni")))
// 256-bit and 512-bit registers with AVX-512 VNNI (the EVEX vpdpbusd/vpdpwssd):
// KernelSet::avx512_vnni.
#define LLAMA_TARGET_AVX512_VNNI \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma,f16c")))
// x86-64-v4.
#define LLAMA_TARGET_AVX512                                                        \
  __attribute__((                                                                  \
      target("avx512f,avx512bw,avx512vl,avx512dq,avx512cd,avx2,fma,f16c,bmi,bmi2," \
             "lzcnt,movbe,popcnt")))
#define LLAMA_HAVE_X86_TARGETS 1
#else
#define LLAMA_TARGET_AVX2
#define LLAMA_TARGET_AVX2_VNNI
#define LLAMA_TARGET_AVX512_VNNI
#define LLAMA_TARGET_AVX512
#define LLAMA_HAVE_X86_TARGETS 0
#endif

// A body written once and compiled for each level it is inlined into.
#define LLAMA_ALWAYS_INLINE inline __attribute__((always_inline))

#include <cmath>

namespace llama {

// a * b + c rounded once, as the levels with FMA compute it (Fma: std::fma,
// one instruction there). Without FMA (the portable level) std::fma is a libm
// call per value, so the sum is taken in double instead: a float product is
// exact in double, and rounding the double sum to float gives the fused
// result except in rare double-rounding cases, so the portable level follows
// the FMA levels' numerics (and the reference streams made with FMA) at the
// speed of plain double arithmetic.
template <bool Fma>
LLAMA_ALWAYS_INLINE float fused_madd(float a, float b, float c) {
  if constexpr (Fma) {
    return std::fma(a, b, c);
  } else {
    return static_cast<float>(static_cast<double>(a) * static_cast<double>(b) +
                              static_cast<double>(c));
  }
}

}  // namespace llama

// RET NAME_avx512 PARAMS, NAME_avx2 PARAMS and NAME_portable PARAMS, each
// returning BODY<Fma> ARGS (an LLAMA_ALWAYS_INLINE template on bool Fma:
// whether the level has FMA, see fused_madd) compiled for its level.
#define LLAMA_SIMD_VARIANTS(RET, NAME, BODY, PARAMS, ARGS)                 \
  LLAMA_TARGET_AVX512 RET NAME##_avx512 PARAMS { return BODY<true> ARGS; } \
  LLAMA_TARGET_AVX2 RET NAME##_avx2 PARAMS { return BODY<true> ARGS; }     \
  RET NAME##_portable PARAMS { return BODY<false> ARGS; }

// Returns NAME_<level> ARGS for a SimdLevel the CPU runs (simd_level(), or a
// level checked with simd_level_supported).
#define LLAMA_SIMD_DISPATCH(LEVEL, NAME, ARGS) \
  switch (LEVEL) {                             \
    case ::llama::SimdLevel::avx512:           \
      return NAME##_avx512 ARGS;               \
    case ::llama::SimdLevel::avx2:             \
      return NAME##_avx2 ARGS;                 \
    case ::llama::SimdLevel::portable:         \
      break;                                   \
  }                                            \
  return NAME##_portable ARGS
