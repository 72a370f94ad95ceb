// K-quant x q8_K products (gguf_kquant.hpp): the q8_K quantizer, the input
// checks and the dispatch to the row dots (products/kquant_dots.cpp,
// products/low_kquant_dots.cpp) or the x86 kernels.
#include "llama/kernels/products/gguf_kquant.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/products/block_input_sizes.hpp"
#include "kernels/products/gguf_kquant_kernels.hpp"
#include "llama/error.hpp"
#include "llama/kernels/numbers/gguf_blocks.hpp"
#include "llama/kernels/x86/simd_target.hpp"

namespace llama {
namespace {

// ggml's nearest_int: round half to even through the float add of 1.5 * 2^23,
// exact for |v| < 2^22 (q8_K's products stay within 127 of zero).
int32_t nearest_int(float v) {
  const float biased = v + 12582912.f;
  int32_t i;
  std::memcpy(&i, &biased, sizeof i);
  return (i & 0x007fffff) - 0x00400000;
}

void quantize_q8_k_portable(const float* x, int64_t blocks, int8_t* values, float* d) {
  for (int64_t b = 0; b < blocks; ++b) {
    const float* xb = x + b * kQK_K;
    int8_t* q = values + b * kQK_K;
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < kQK_K; ++j) {
      const float ax = std::fabs(xb[j]);
      if (ax > amax) {
        amax = ax;
        max = xb[j];
      }
    }
    if (amax == 0.0f) {
      d[b] = 0.0f;
      std::memset(q, 0, kQK_K);
      continue;
    }
    const float iscale = -127.f / max;
    for (int j = 0; j < kQK_K; ++j) {
      q[j] = static_cast<int8_t>(std::min(127, nearest_int(iscale * xb[j])));
    }
    d[b] = 1 / iscale;
  }
}

void check_input(const BlockMatrix& w, std::span<const int8_t> values, std::span<const float> d,
                 int64_t group_size, int64_t n) {
  if (!has_q8_k_products(w.kind)) {
    throw Error(std::string("q8_K products: ") + to_string(w.kind) + " weights have none");
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

// The sums of each `group` values of every vector. Kept per thread from call
// to call (decode makes hundreds of calls per token); every entry read is
// written by this call first.
const int16_t* sums_of(std::span<const int8_t> values, size_t group) {
  thread_local std::vector<int16_t> sums;  // i16 [values / group]
  const size_t n = values.size() / group;
  if (sums.size() < n) sums.resize(n);
  for (size_t g = 0; g < n; ++g) {
    int32_t s = 0;
    for (size_t i = 0; i < group; ++i) s += values[group * g + i];
    sums[g] = static_cast<int16_t>(s);
  }
  return sums.data();
}

// n vectors as the kernels read them, with the sums w's mins take: Q4_K's and
// Q5_K's of each 32 values, Q2_K's of each 16 (ggml's bsums).
detail::Q8KBatch batch(const BlockMatrix& w, std::span<const int8_t> values,
                       std::span<const float> d, int64_t n) {
  detail::Q8KBatch b{values.data(), d.data(), nullptr, nullptr, n, w.cols};
  if (w.kind == BlockKind::q4_k || w.kind == BlockKind::q5_k) b.sums = sums_of(values, 32);
  if (w.kind == BlockKind::q2_k) b.bsums = sums_of(values, 16);
  return b;
}

// Whether `kernel` is a vector set (one this CPU can run).
bool vector_kernels(KernelSet kernel) {
  if (kernel == KernelSet::portable) return false;
  require_kernel_set(kernel, "q8_K products");
  return true;
}

using RowDot = float (*)(const std::byte* row, const detail::Q8KBatch& x, int64_t t);

RowDot row_dot(BlockKind kind) {
  switch (kind) {
    case BlockKind::q4_k:
      return detail::q4_k_row_dot;
    case BlockKind::q5_k:
      return detail::q5_k_row_dot;
    case BlockKind::q6_k:
      return detail::q6_k_row_dot;
    case BlockKind::q3_k:
      return detail::q3_k_row_dot;
    default:
      return detail::q2_k_row_dot;
  }
}

void rows(const BlockMatrix& w, const detail::Q8KBatch& x, float* out, int64_t out_stride,
          int64_t row_begin, int64_t row_end, KernelSet kernel) {
#if LLAMA_HAVE_X86_TARGETS
  if (vector_kernels(kernel)) {
    const bool low = w.kind == BlockKind::q3_k || w.kind == BlockKind::q2_k;
    if (kernel == KernelSet::avx512_vnni) {
      if (low) {
        detail::low_kquant_rows_vnni(w, x, out, out_stride, row_begin, row_end);
      } else {
        detail::kquant_q8_k_rows_vnni(w, x, out, out_stride, row_begin, row_end);
      }
      return;
    }
    // The avx2 set's bodies; avx_vnni runs the same sources compiled with AVX-VNNI.
    const bool vnni = kernel == KernelSet::avx_vnni;
    if (low && vnni) {
      detail::low_kquant_rows_avxvnni(w, x, out, out_stride, row_begin, row_end);
    } else if (low) {
      detail::low_kquant_rows_avx2(w, x, out, out_stride, row_begin, row_end);
    } else if (vnni) {
      detail::kquant_q8_k_rows_avxvnni(w, x, out, out_stride, row_begin, row_end);
    } else {
      detail::kquant_q8_k_rows_avx2(w, x, out, out_stride, row_begin, row_end);
    }
    return;
  }
#else
  (void)vector_kernels;
#endif
  const RowDot dot = row_dot(w.kind);
  for (int64_t r = row_begin; r < row_end; ++r) {
    for (int64_t t = 0; t < x.n; ++t) out[t * out_stride + r - row_begin] = dot(w.row(r), x, t);
  }
}

}  // namespace

void quantize_activations_q8_k(std::span<const float> x, std::span<int8_t> values,
                               std::span<float> scales) {
  quantize_activations_q8_k(x, values, scales, simd_level());
}

void quantize_activations_q8_k(std::span<const float> x, std::span<int8_t> values,
                               std::span<float> scales, SimdLevel level) {
  detail::check_block_input_sizes("quantize_activations_q8_k", x.size(), values.size(),
                                  scales.size(), kQK_K, kQK_K);
  const auto blocks = static_cast<int64_t>(scales.size());
#if LLAMA_HAVE_X86_TARGETS
  switch (runnable_level(level)) {
    case SimdLevel::avx512:
      detail::quantize_q8_k_avx512(x.data(), blocks, values.data(), scales.data());
      return;
    case SimdLevel::avx2:
      detail::quantize_q8_k_avx2(x.data(), blocks, values.data(), scales.data());
      return;
    case SimdLevel::portable:
      break;
  }
#else
  (void)level;
#endif
  quantize_q8_k_portable(x.data(), blocks, values.data(), scales.data());
}

bool has_q8_k_products(BlockKind kind) {
  return kind == BlockKind::q4_k || kind == BlockKind::q5_k || kind == BlockKind::q6_k ||
         kind == BlockKind::q3_k || kind == BlockKind::q2_k;
}

void kquant_q8_k_matvec_rows(std::span<float> out, const BlockMatrix& w, const Q8View& x,
                             int64_t row_begin, int64_t row_end, KernelSet kernel) {
  check_input(w, x.values, x.scales, x.group_size, 1);
  rows(w, batch(w, x.values, x.scales, 1), out.data(), 0, row_begin, row_end, kernel);
}

void kquant_q8_k_matmat_rows(std::span<float> out, int64_t out_stride, const BlockMatrix& w,
                             const Q8BatchView& x, int64_t row_begin, int64_t row_end,
                             KernelSet kernel) {
  const int64_t n = x.cols > 0 ? static_cast<int64_t>(x.values.size()) / x.cols : 0;
  if (x.cols != w.cols) {
    throw Error(std::string("q8_K products: ") + to_string(w.kind) + " weights of " +
                std::to_string(w.cols) + " columns against vectors of " + std::to_string(x.cols));
  }
  check_input(w, x.values, x.scales, x.group_size, n);
  rows(w, batch(w, x.values, x.scales, n), out.data() + row_begin, out_stride, row_begin, row_end,
       kernel);
}

}  // namespace llama
