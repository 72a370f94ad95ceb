// Register-blocked dot products for decode (matvec_rows): R rows of W against
// T rows of X at once, summed in double lanes. Double, not f32: with f32 lanes
// here the mini32k-story parity case leaves run.c's stream (a near-tie in the
// nucleus flips). Batches do not come here: their products are f32 (the core's
// gemm_f32_rows), like the BLAS backend's sgemm prefill.
//
// Two versions with the same arithmetic and bits: `avx512`, the core's public
// x86 kernel (llama/kernels/x86/dot_block_f64.hpp: intrinsics, compiled for
// that level only, so call it after simd_level() allows it), and `generic`,
// here: the same body (LLAMA_DOT_BLOCK_F64_BODY) over plain arrays, always
// inline, so the compiler vectorizes it for whatever level the caller is
// compiled for.
#pragma once

#include <cmath>
#include <cstdint>

#include "llama/kernels/x86/dot_block_f64.hpp"
#include "llama/kernels/x86/simd_target.hpp"

namespace llama::graph::detail {

using ::llama::detail::dot_block_f64::kLanes;

#if LLAMA_HAVE_X86_TARGETS
namespace avx512 = ::llama::detail::dot_block_f64::avx512;
#endif

namespace generic {
struct Lanes {
  double l[8];
};
inline Lanes zero_lanes() { return Lanes{}; }
inline Lanes load_lanes(const float* p) {
  Lanes v;
  for (int i = 0; i < 8; ++i) v.l[i] = p[i];
  return v;
}
inline Lanes load_lanes(const float* p, int64_t n) {
  Lanes v{};
  for (int64_t i = 0; i < n; ++i) v.l[i] = p[i];
  return v;
}
inline Lanes fma_lanes(Lanes a, Lanes b, Lanes c) {
  // Multiply then add (std::fma is a library call without hardware FMA): the
  // product of two floats is exact in double, so this rounds once, as an FMA.
  for (int i = 0; i < 8; ++i) c.l[i] += a.l[i] * b.l[i];
  return c;
}
// (l0 + l4) + (l2 + l6), (l1 + l5) + (l3 + l7), then their sum: the avx512
// version's tree.
inline double reduce_lanes(Lanes v) {
  double a[4];
  for (int i = 0; i < 4; ++i) a[i] = v.l[i] + v.l[i + 4];
  const double b0 = a[0] + a[2], b1 = a[1] + a[3];
  return b0 + b1;
}
template <int R, int T>
LLAMA_ALWAYS_INLINE void dot_block(const float* w, int64_t ldw, const float* x, int64_t ldx,
                                   int64_t cols, float* out) {
  LLAMA_DOT_BLOCK_F64_BODY
}
}  // namespace generic

}  // namespace llama::graph::detail
