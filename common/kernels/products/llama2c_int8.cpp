// Q8_0 kernels: quantization as runq.c and export.py do it (activations 16
// at a time where the CPU has AVX-512: x86/llama2c_int8_quantize.cpp), the
// portable int8 matrix-vector and batch products, and the choice between them
// and the AVX-512 VNNI ones (x86/llama2c_int8_vnni.cpp,
// x86/llama2c_int8_vnni_batch.cpp; on the AMX-INT8 tiles where the CPU has
// them, x86/int8_tiles_amx.cpp) or the avx2 sets' bodies
// (x86/llama2c_int8_avx2.cpp, x86/llama2c_int8_avx2_batch.cpp), made at run
// time.
#include "llama/kernels/products/llama2c_int8.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "kernels/products/llama2c_int8_kernels.hpp"
#include "llama/error.hpp"
#include "llama/kernels/dispatch/cpu_features.hpp"
#include "llama/kernels/dispatch/kernel_set.hpp"
#include "llama/kernels/x86/simd_target.hpp"

namespace llama {
namespace {

int8_t to_int8(float r) {
  if (!(r == r)) return 0;  // NaN: an all-zero group divides 0 by 0
  // Never -128: the VNNI kernel negates activation values.
  return static_cast<int8_t>(std::clamp(r, -127.0f, 127.0f));
}

int32_t dot_group_portable(const int8_t* w, const int8_t* x, int64_t n) {
  int32_t acc = 0;
  for (int64_t k = 0; k < n; ++k) acc += int32_t{w[k]} * int32_t{x[k]};
  return acc;
}

}  // namespace

namespace detail {

// One row of W (`cols` = x's length) against one quantized vector: runq.c's
// int32 sum per group, then val = fma(ival * w_scale, x_scale, val) in order.
// Vec is Q8Vector or Q8View.
template <typename Vec>
static float row_dot_portable(const int8_t* wr, const float* ws, const Vec& x) {
  const auto cols = static_cast<int64_t>(x.values.size());
  const int64_t gs = x.group_size, groups = cols / gs;
  float val = 0.0f;
  for (int64_t g = 0; g < groups; ++g) {
    const int32_t ival = dot_group_portable(wr + g * gs, x.values.data() + g * gs, gs);
    // runq.c's `val += ival * ws * xs`, contracted into an FMA as in the reference build.
    val = std::fma(static_cast<float>(ival) * ws[g], x.scales[static_cast<size_t>(g)], val);
  }
  return val;
}

void q8_matvec_rows_portable(std::span<float> out, const QuantizedTensor& w, const Q8View& x,
                             int64_t row_begin, int64_t row_end) {
  const auto cols = static_cast<int64_t>(x.values.size());
  const int64_t groups = cols / x.group_size;
  for (int64_t r = row_begin; r < row_end; ++r) {
    out[static_cast<size_t>(r - row_begin)] =
        row_dot_portable(w.values.data() + r * cols, w.scales.data() + r * groups, x);
  }
}

void q8_matmat_rows_portable(std::span<float> out, int64_t out_stride, const QuantizedTensor& w,
                             const Q8Batch& x, int64_t row_begin, int64_t row_end) {
  const int64_t groups = x.cols / x.group_size;
  for (int64_t r = row_begin; r < row_end; ++r) {
    for (int64_t t = 0; t < x.n; ++t) {
      const Q8View xt({x.values_of(t), static_cast<size_t>(x.cols)},
                      {x.scales_of(t), static_cast<size_t>(groups)}, x.group_size);
      out[static_cast<size_t>(t * out_stride + r)] =
          row_dot_portable(w.values.data() + r * x.cols, w.scales.data() + r * groups, xt);
    }
  }
}

}  // namespace detail

void Q8Vector::resize(int64_t n, int64_t gs) {
  if (gs <= 0 || n < 0 || n % gs != 0) {
    throw Error("Q8_0 vector of " + std::to_string(n) +
                " values needs a group size dividing it, got " + std::to_string(gs));
  }
  values.assign(static_cast<size_t>(n), 0);
  scales.assign(static_cast<size_t>(n / gs), 0.0f);
  group_size = gs;
}

void quantize_activations(std::span<const float> x, Q8Vector& out) {
  quantize_activations(x, out.values, out.scales, out.group_size);
}

void quantize_activations(std::span<const float> x, std::span<int8_t> values,
                          std::span<float> scales, int64_t group_size) {
  quantize_activations(x, values, scales, group_size, simd_level());
}

void quantize_activations(std::span<const float> x, std::span<int8_t> values,
                          std::span<float> scales, int64_t group_size, SimdLevel level) {
  const size_t gs = static_cast<size_t>(group_size);
#if LLAMA_HAVE_X86_TARGETS
  if (level == SimdLevel::avx512 && simd_level_supported(SimdLevel::avx512)) {
    detail::quantize_groups_avx512(x.data(), static_cast<int64_t>(scales.size()), group_size,
                                   values.data(), scales.data());
    return;
  }
#else
  (void)level;
#endif
  for (size_t g = 0; g < scales.size(); ++g) {
    const float* xg = x.data() + g * gs;
    float wmax = 0.0f;
    for (size_t i = 0; i < gs; ++i) wmax = std::max(wmax, std::fabs(xg[i]));
    const float scale = wmax / 127.0f;
    scales[g] = scale;
    for (size_t i = 0; i < gs; ++i) values[g * gs + i] = to_int8(std::round(xg[i] / scale));
  }
}

void q8_matvec_rows(std::span<float> out, const QuantizedTensor& w, const Q8Vector& x,
                    int64_t row_begin, int64_t row_end, KernelSet kernel) {
  q8_matvec_rows(out, w, Q8View(x), row_begin, row_end, kernel);
}

void q8_matvec_rows(std::span<float> out, const QuantizedTensor& w, const Q8View& x,
                    int64_t row_begin, int64_t row_end, KernelSet kernel) {
  if (kernel == KernelSet::avx512_vnni) {
    detail::q8_matvec_rows_vnni(out, w, x, row_begin, row_end);
#if LLAMA_HAVE_X86_TARGETS
  } else if (runs_avx2_bodies(kernel)) {
    require_kernel_set(kernel, "Q8_0 decode kernel");
    if (kernel == KernelSet::avx_vnni) {
      detail::q8_matvec_rows_avxvnni(out, w, x, row_begin, row_end);
    } else {
      detail::q8_matvec_rows_avx2(out, w, x, row_begin, row_end);
    }
#endif
  } else {
    detail::q8_matvec_rows_portable(out, w, x, row_begin, row_end);
  }
}

namespace {

void matmat(std::span<float> out, int64_t out_stride, const QuantizedTensor& w,
            const detail::Q8Batch& x, int64_t row_begin, int64_t row_end, KernelSet kernel) {
  if (x.n == 0) return;
  if (kernel == KernelSet::avx512_vnni) {
    if (x.n >= detail::kMinTileBatch && detail::amx_int8_takes_group_size(x.group_size) &&
        amx_int8_enabled()) {
      detail::q8_matmat_rows_amx(out, out_stride, w, x, row_begin, row_end);
      return;
    }
    detail::q8_matmat_rows_vnni(out, out_stride, w, x, row_begin, row_end);
#if LLAMA_HAVE_X86_TARGETS
  } else if (runs_avx2_bodies(kernel)) {
    require_kernel_set(kernel, "Q8_0 batch kernel");
    if (kernel == KernelSet::avx_vnni) {
      detail::q8_matmat_rows_avxvnni(out, out_stride, w, x, row_begin, row_end);
    } else {
      detail::q8_matmat_rows_avx2(out, out_stride, w, x, row_begin, row_end);
    }
#endif
  } else {
    detail::q8_matmat_rows_portable(out, out_stride, w, x, row_begin, row_end);
  }
}

}  // namespace

void q8_matmat_rows(std::span<float> out, int64_t out_stride, const QuantizedTensor& w,
                    std::span<const Q8Vector> x, int64_t row_begin, int64_t row_end,
                    KernelSet kernel) {
  if (x.empty()) return;
  detail::Q8Batch batch;
  batch.vectors = x.data();
  batch.n = static_cast<int64_t>(x.size());
  batch.cols = static_cast<int64_t>(x[0].values.size());
  batch.group_size = x[0].group_size;
  matmat(out, out_stride, w, batch, row_begin, row_end, kernel);
}

void q8_matmat_rows(std::span<float> out, int64_t out_stride, const QuantizedTensor& w,
                    const Q8BatchView& x, int64_t row_begin, int64_t row_end, KernelSet kernel) {
  const auto n_values = static_cast<int64_t>(x.values.size());
  if (x.cols <= 0 || x.group_size <= 0 || x.cols % x.group_size != 0 || n_values % x.cols != 0 ||
      static_cast<int64_t>(x.scales.size()) != n_values / x.cols * (x.cols / x.group_size)) {
    throw Error("Q8_0 batch of " + std::to_string(x.values.size()) + " values and " +
                std::to_string(x.scales.size()) + " scales is not whole vectors of " +
                std::to_string(x.cols) + " values in groups of " + std::to_string(x.group_size));
  }
  detail::Q8Batch batch;
  batch.values = x.values.data();
  batch.scales = x.scales.data();
  batch.n = n_values / x.cols;
  batch.cols = x.cols;
  batch.group_size = x.group_size;
  matmat(out, out_stride, w, batch, row_begin, row_end, kernel);
}

void dequantize(const QuantizedTensor& t, std::span<float> out) {
  const size_t gs = static_cast<size_t>(t.group_size);
  for (size_t i = 0; i < t.values.size(); ++i) {
    out[i] = static_cast<float>(t.values[i]) * t.scales[i / gs];
  }
}

float quantize_q80(std::span<const float> w, int64_t group_size, std::span<int8_t> values,
                   std::span<float> scales) {
  const size_t gs = static_cast<size_t>(group_size);
  float max_err = 0.0f;
  for (size_t g = 0; g < scales.size(); ++g) {
    const float* wg = w.data() + g * gs;
    float wmax = 0.0f;
    for (size_t i = 0; i < gs; ++i) wmax = std::max(wmax, std::fabs(wg[i]));
    const float scale = wmax / 127.0f;
    scales[g] = scale;
    for (size_t i = 0; i < gs; ++i) {
      const int8_t q = to_int8(std::nearbyint(wg[i] / scale));  // default mode: half to even
      values[g * gs + i] = q;
      max_err = std::max(max_err, std::fabs(static_cast<float>(q) * scale - wg[i]));
    }
  }
  return max_err;
}

}  // namespace llama
