// Q3_K and Q2_K x q8_K products (low_kquant_products.hpp): the dot products as
// plain loops (the definitions the x86 kernels reproduce) and the dispatch.
#include "llama/kernels/products/low_kquant_products.hpp"

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/products/low_kquant_kernels.hpp"
#include "llama/error.hpp"
#include "llama/kernels/dispatch/cpu_features.hpp"
#include "llama/kernels/numbers/half.hpp"
#include "llama/kernels/numbers/low_kquant_blocks.hpp"
#include "llama/kernels/x86/simd_target.hpp"

namespace llama {
namespace {

// ((a0 + a4) + (a2 + a6)) + ((a1 + a5) + (a3 + a7)): ggml's hsum_float_8.
float hsum8(const float (&a)[8]) {
  return ((a[0] + a[4]) + (a[2] + a[6])) + ((a[1] + a[5]) + (a[3] + a[7]));
}

// The integer lanes of one block: lane i / 4 of every 32-value run takes
// scale(v / 16) * code(v) * q[v].
template <typename Scale, typename Code>
void block_lanes(const int8_t* q, Scale scale, Code code, int32_t (&lanes)[8]) {
  for (int v = 0; v < kQK_K; ++v) lanes[(v % 32) / 4] += scale(v / 16) * code(v) * q[v];
}

float q3_k_row_dot(const std::byte* row, const detail::LowKBatch& x, int64_t t) {
  const int64_t blocks = x.cols / kQK_K;
  const int8_t* xv = x.values + t * x.cols;
  float acc[8] = {};
  for (int64_t b = 0; b < blocks; ++b) {
    BlockQ3_K blk;
    std::memcpy(&blk, row + b * sizeof(BlockQ3_K), sizeof blk);
    const float d = x.d[t * blocks + b] * f16_to_f32(blk.d);
    int32_t lanes[8] = {};
    block_lanes(
        xv + b * kQK_K, [&](int s) { return q3_k_scale(blk.scales, s); },
        [&](int v) { return q3_k_code(blk, v); }, lanes);
    for (int l = 0; l < 8; ++l) acc[l] = std::fma(d, static_cast<float>(lanes[l]), acc[l]);
  }
  return hsum8(acc);
}

float q2_k_row_dot(const std::byte* row, const detail::LowKBatch& x, int64_t t) {
  const int64_t blocks = x.cols / kQK_K;
  const int8_t* xv = x.values + t * x.cols;
  const int16_t* xs = x.sums + t * (x.cols / 16);
  float acc[8] = {};
  for (int64_t b = 0; b < blocks; ++b) {
    BlockQ2_K blk;
    std::memcpy(&blk, row + b * sizeof(BlockQ2_K), sizeof blk);
    const float d8 = x.d[t * blocks + b];
    const float d = d8 * f16_to_f32(blk.d);
    const float dmin = -d8 * f16_to_f32(blk.dmin);
    const int16_t* bsums = xs + b * 16;
    for (int l = 0; l < 8; ++l) {
      const int32_t prod =
          (blk.scales[2 * l] >> 4) * bsums[2 * l] + (blk.scales[2 * l + 1] >> 4) * bsums[2 * l + 1];
      acc[l] = std::fma(dmin, static_cast<float>(prod), acc[l]);
    }
    int32_t lanes[8] = {};
    block_lanes(
        xv + b * kQK_K, [&](int s) { return blk.scales[s] & 15; },
        [&](int v) { return q2_k_code(blk, v); }, lanes);
    for (int l = 0; l < 8; ++l) acc[l] = std::fma(d, static_cast<float>(lanes[l]), acc[l]);
  }
  return hsum8(acc);
}

void check_input(const BlockMatrix& w, std::span<const int8_t> values, std::span<const float> d,
                 int64_t group_size, int64_t n) {
  if (!has_low_kquant_products(w.kind)) {
    throw Error(std::string("q8_K products: ") + to_string(w.kind) +
                " weights have no Q3_K/Q2_K products");
  }
  const auto cols = static_cast<uint64_t>(w.cols), vectors = static_cast<uint64_t>(n);
  if (group_size != kQK_K || values.size() != cols * vectors ||
      d.size() != cols / kQK_K * vectors) {
    throw Error(std::string("q8_K products: ") + to_string(w.kind) + " weights of " +
                std::to_string(w.cols) + " columns against " + std::to_string(values.size()) +
                " values and " + std::to_string(d.size()) + " scales in groups of " +
                std::to_string(group_size));
  }
}

// ggml's bsums: the sums of each 16 values of every vector. Kept per thread
// from call to call (decode makes hundreds of calls per token); every entry
// read is written by this call first.
const int16_t* sums_of_16(std::span<const int8_t> values) {
  thread_local std::vector<int16_t> sums;  // i16 [values / 16]
  const size_t n = values.size() / 16;
  if (sums.size() < n) sums.resize(n);
  for (size_t g = 0; g < n; ++g) {
    int32_t s = 0;
    for (size_t i = 0; i < 16; ++i) s += values[16 * g + i];
    sums[g] = static_cast<int16_t>(s);
  }
  return sums.data();
}

// Whether `kernel` is a vector set (asking for one on a CPU without it is a
// bug, not a fallback).
bool vector_kernels(KernelSet kernel) {
  if (kernel != KernelSet::portable && !kernel_set_available(kernel)) {
    throw Error(std::string("Q3_K/Q2_K products: no ") + to_string(kernel) +
                " kernels on this CPU");
  }
  return kernel != KernelSet::portable;
}

void rows(const BlockMatrix& w, const detail::LowKBatch& x, float* out, int64_t out_stride,
          int64_t row_begin, int64_t row_end, KernelSet kernel) {
#if LLAMA_HAVE_X86_TARGETS
  if (vector_kernels(kernel)) {
    if (kernel == KernelSet::avx512_vnni) {
      detail::low_kquant_rows_vnni(w, x, out, out_stride, row_begin, row_end);
    } else if (kernel == KernelSet::avx_vnni) {
      detail::low_kquant_rows_avxvnni(w, x, out, out_stride, row_begin, row_end);
    } else {
      detail::low_kquant_rows_avx2(w, x, out, out_stride, row_begin, row_end);
    }
    return;
  }
#else
  (void)vector_kernels;
#endif
  for (int64_t r = row_begin; r < row_end; ++r) {
    for (int64_t t = 0; t < x.n; ++t) {
      out[t * out_stride + r - row_begin] =
          w.kind == BlockKind::q3_k ? q3_k_row_dot(w.row(r), x, t) : q2_k_row_dot(w.row(r), x, t);
    }
  }
}

}  // namespace

bool has_low_kquant_products(BlockKind kind) {
  return kind == BlockKind::q3_k || kind == BlockKind::q2_k;
}

void low_kquant_q8_k_matvec_rows(std::span<float> out, const BlockMatrix& w, const Q8View& x,
                                 int64_t row_begin, int64_t row_end, KernelSet kernel) {
  check_input(w, x.values, x.scales, x.group_size, 1);
  const detail::LowKBatch batch{x.values.data(), x.scales.data(), sums_of_16(x.values), 1, w.cols};
  rows(w, batch, out.data(), 0, row_begin, row_end, kernel);
}

void low_kquant_q8_k_matmat_rows(std::span<float> out, int64_t out_stride, const BlockMatrix& w,
                                 const Q8BatchView& x, int64_t row_begin, int64_t row_end,
                                 KernelSet kernel) {
  const int64_t n = x.cols > 0 ? static_cast<int64_t>(x.values.size()) / x.cols : 0;
  if (x.cols != w.cols) {
    throw Error(std::string("q8_K products: ") + to_string(w.kind) + " weights of " +
                std::to_string(w.cols) + " columns against vectors of " + std::to_string(x.cols));
  }
  check_input(w, x.values, x.scales, x.group_size, n);
  const detail::LowKBatch batch{x.values.data(), x.scales.data(), sums_of_16(x.values), n, w.cols};
  rows(w, batch, out.data() + row_begin, out_stride, row_begin, row_end, kernel);
}

}  // namespace llama
