// Private to the core: expf for runq.c's softmax, 16 floats at a time with
// AVX-512 and the bits of std::exp. glibc's expf (2.28 and later,
// sysdeps/ieee754/flt-32/e_expf.c) is a few double operations around a
// 32-entry table, and on a CPU with FMA and AVX2 (every AVX-512 one) glibc
// runs the build that fuses two of its multiply-adds; this repeats those
// operations lane by lane, so each lane is std::exp's result. A libm with
// another algorithm would give other bits: vector_expf_matches_libm() checks
// once per process, on a spread of inputs, and the callers use std::exp
// where it says no. Lanes rather than the scalar call because decode
// attention takes an expf per cached position per head, which at depth makes
// the scalar calls a large part of attention.
#pragma once

#include <cstdint>

namespace llama::q8::detail {

// True when expf_shifted_avx512 gives std::exp's bits on this machine (a
// sample of inputs from -104 to 89, specials included), found once per
// process. Only meaningful where the avx512 SimdLevel runs (false elsewhere).
bool vector_expf_matches_libm();

// x[i] = std::exp(x[i] - shift) for i in [0, n). The caller checks the avx512
// level and vector_expf_matches_libm().
void expf_shifted_avx512(float* x, int64_t n, float shift);

// out[i] = silu(gate[i]) * up[i] for i in [0, n), with the bits of steps/run_c.cpp's
// swiglu loop (gate * (1 / (1 + std::exp(-gate))) * up, each step rounded to
// f32). `out` may alias `gate`. Same caller checks.
void swiglu_avx512(float* out, const float* gate, const float* up, int64_t n);

// A block of 16 queries in lanes (st: f32 [n_keys, 16]): for each lane l and
// t < n_pos[l], in t order, st[t * 16 + l] = std::exp(st[t * 16 + l] -
// max_val[l]) and sum[l] += it. Same caller checks.
void expf_lanes_avx512(float* st, int64_t n_keys, const int64_t* n_pos, const float* max_val,
                       float* sum);

}  // namespace llama::q8::detail
