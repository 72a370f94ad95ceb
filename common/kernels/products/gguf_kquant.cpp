// K-quant x q8_K products (gguf_kquant.hpp): the q8_K quantizer and the dot
// products as plain loops (the definitions the x86 kernels reproduce), and the
// dispatch to those kernels.
#include "llama/kernels/products/gguf_kquant.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

#include "kernels/products/block_input_sizes.hpp"
#include "kernels/products/gguf_kquant_kernels.hpp"
#include "llama/error.hpp"
#include "llama/kernels/numbers/gguf_blocks.hpp"
#include "llama/kernels/numbers/half.hpp"
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

// ((a0 + a4) + (a2 + a6)) + ((a1 + a5) + (a3 + a7)): ggml's hsum_float_8.
float hsum8(const float (&a)[8]) {
  return ((a[0] + a[4]) + (a[2] + a[6])) + ((a[1] + a[5]) + (a[3] + a[7]));
}

// Q4_K, and Q5_K (Block = BlockQ5_K): its codes take bit s of qh[i] as 16
// (value i of sub-block s), and its mins, as the AVX2 kernel takes them, enter
// whole per block into one scalar, summs = fma(dmin, float(sum), summs), added
// after hsum8; Q4_K's in 4 lanes of pairs of sub-blocks.
template <typename Block>
float q4_5_k_row_dot(const std::byte* row, const detail::Q8KBatch& x, int64_t t) {
  constexpr bool kFive = std::is_same_v<Block, BlockQ5_K>;
  const int64_t blocks = x.cols / kQK_K;
  const int8_t* xv = x.values + t * x.cols;
  const int16_t* xs = x.sums + t * (x.cols / 32);
  float acc[8] = {}, accm[4] = {}, summs = 0.0f;
  for (int64_t b = 0; b < blocks; ++b) {
    Block blk;
    std::memcpy(&blk, row + b * sizeof(Block), sizeof blk);
    const float d8 = x.d[t * blocks + b];
    const float d = d8 * f16_to_f32(blk.d);
    const float dmin = -d8 * f16_to_f32(blk.dmin);
    uint8_t sc[8], mn[8];
    for (int s = 0; s < 8; ++s) q4_k_scale_min(blk.scales, s, sc[s], mn[s]);
    const int16_t* sums = xs + b * 8;
    int32_t prod[4];
    for (int m = 0; m < 4; ++m) prod[m] = mn[2 * m] * sums[2 * m] + mn[2 * m + 1] * sums[2 * m + 1];
    if constexpr (kFive) {
      summs = std::fma(dmin, static_cast<float>(prod[0] + prod[1] + prod[2] + prod[3]), summs);
    } else {
      for (int m = 0; m < 4; ++m) accm[m] = std::fma(dmin, static_cast<float>(prod[m]), accm[m]);
    }
    const int8_t* q = xv + b * kQK_K;
    int32_t lanes[8] = {};
    for (int j = 0; j < 4; ++j) {
      for (int i = 0; i < 32; ++i) {
        int32_t lo = blk.qs[32 * j + i] & 15, hi = blk.qs[32 * j + i] >> 4;
        if constexpr (kFive) {
          lo |= ((blk.qh[i] >> (2 * j)) & 1) << 4;
          hi |= ((blk.qh[i] >> (2 * j + 1)) & 1) << 4;
        }
        lanes[i / 4] += sc[2 * j] * lo * q[64 * j + i] + sc[2 * j + 1] * hi * q[64 * j + 32 + i];
      }
    }
    for (int l = 0; l < 8; ++l) acc[l] = std::fma(d, static_cast<float>(lanes[l]), acc[l]);
  }
  if constexpr (kFive) return hsum8(acc) + summs;
  return hsum8(acc) + ((accm[0] + accm[2]) + (accm[1] + accm[3]));
}

float q6_k_row_dot(const std::byte* row, const detail::Q8KBatch& x, int64_t t) {
  const int64_t blocks = x.cols / kQK_K;
  const int8_t* xv = x.values + t * x.cols;
  float acc[8] = {};
  for (int64_t b = 0; b < blocks; ++b) {
    BlockQ6_K blk;
    std::memcpy(&blk, row + b * sizeof(BlockQ6_K), sizeof blk);
    const float d = x.d[t * blocks + b] * f16_to_f32(blk.d);
    const int8_t* q = xv + b * kQK_K;
    int32_t lanes[8] = {};
    for (int h = 0; h < 2; ++h) {  // halves of 128 values
      const uint8_t* ql = blk.ql + 64 * h;
      const uint8_t* qh = blk.qh + 32 * h;
      for (int k = 0; k < 4; ++k) {  // runs of 32 values
        for (int i = 0; i < 32; ++i) {
          const int32_t low = ql[i + 32 * (k % 2)];
          const int32_t nib = k < 2 ? low & 15 : low >> 4;
          const int32_t code = nib | (((qh[i] >> (2 * k)) & 3) << 4);
          const int32_t scale = blk.scales[8 * h + 2 * k + i / 16];
          lanes[i / 4] += scale * (code - 32) * q[128 * h + 32 * k + i];
        }
      }
    }
    for (int l = 0; l < 8; ++l) acc[l] = std::fma(d, static_cast<float>(lanes[l]), acc[l]);
  }
  return hsum8(acc);
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

// The sums of each 32 values of every vector, for Q4_K's mins. Kept per
// thread from call to call (decode makes hundreds of calls per token); every
// entry read is written by this call first.
const int16_t* sums_of_32(std::span<const int8_t> values) {
  thread_local std::vector<int16_t> sums;  // i16 [values / 32]
  const size_t n = values.size() / 32;
  if (sums.size() < n) sums.resize(n);
  for (size_t g = 0; g < n; ++g) {
    int32_t s = 0;
    for (size_t i = 0; i < 32; ++i) s += values[32 * g + i];
    sums[g] = static_cast<int16_t>(s);
  }
  return sums.data();
}

// Whether `kernel` is a vector set (asking for one on a CPU without it is a
// bug, not a fallback).
bool vector_kernels(KernelSet kernel) {
  if (kernel == KernelSet::portable) return false;
  if (!kernel_set_available(kernel)) {
    throw Error(std::string("q8_K products: the ") + to_string(kernel) +
                " kernels were asked for on a CPU without them");
  }
  return true;
}

void rows(const BlockMatrix& w, const detail::Q8KBatch& x, float* out, int64_t out_stride,
          int64_t row_begin, int64_t row_end, KernelSet kernel) {
#if LLAMA_HAVE_X86_TARGETS
  if (vector_kernels(kernel)) {
    if (kernel == KernelSet::avx512_vnni) {
      detail::kquant_q8_k_rows_vnni(w, x, out, out_stride, row_begin, row_end);
      return;
    }
    // The avx2 set's bodies; another kind runs the loops below under it.
    if (w.kind == BlockKind::q4_k || w.kind == BlockKind::q5_k || w.kind == BlockKind::q6_k) {
      if (kernel == KernelSet::avx_vnni) {
        detail::kquant_q8_k_rows_avxvnni(w, x, out, out_stride, row_begin, row_end);
      } else {
        detail::kquant_q8_k_rows_avx2(w, x, out, out_stride, row_begin, row_end);
      }
      return;
    }
  }
#else
  (void)vector_kernels;
#endif
  for (int64_t r = row_begin; r < row_end; ++r) {
    for (int64_t t = 0; t < x.n; ++t) {
      float& o = out[t * out_stride + r - row_begin];
      switch (w.kind) {
        case BlockKind::q4_k:
          o = q4_5_k_row_dot<BlockQ4_K>(w.row(r), x, t);
          break;
        case BlockKind::q5_k:
          o = q4_5_k_row_dot<BlockQ5_K>(w.row(r), x, t);
          break;
        default:
          o = q6_k_row_dot(w.row(r), x, t);
          break;
      }
    }
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
  return kind == BlockKind::q4_k || kind == BlockKind::q5_k || kind == BlockKind::q6_k;
}

void kquant_q8_k_matvec_rows(std::span<float> out, const BlockMatrix& w, const Q8View& x,
                             int64_t row_begin, int64_t row_end, KernelSet kernel) {
  check_input(w, x.values, x.scales, x.group_size, 1);
  const detail::Q8KBatch batch{x.values.data(), x.scales.data(), sums_of_32(x.values), 1, w.cols};
  rows(w, batch, out.data(), 0, row_begin, row_end, kernel);
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
  const detail::Q8KBatch batch{x.values.data(), x.scales.data(), sums_of_32(x.values), n, w.cols};
  rows(w, batch, out.data() + row_begin, out_stride, row_begin, row_end, kernel);
}

}  // namespace llama
