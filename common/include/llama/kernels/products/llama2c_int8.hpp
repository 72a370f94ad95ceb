// Q8_0 kernels every backend shares: runq.c's activation quantization, int8
// matrix-vector products with int32 accumulation per group (portable, and
// AVX-512 VNNI where the CPU has it), dequantization, and export.py's weight
// quantization for the converter.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "llama/tensor.hpp"
#include "llama/kernels/dispatch/cpu_features.hpp"
#include "llama/kernels/dispatch/kernel_set.hpp"

namespace llama {

// An activation vector quantized in groups, sized once and reused per token.
struct Q8Vector {
  std::vector<int8_t> values;  // i8 [n]
  std::vector<float> scales;   // f32 [n / group_size]
  int64_t group_size = 0;
  // Throws Error unless group_size > 0 divides n.
  void resize(int64_t n, int64_t group_size);
};

// A quantized activation vector held elsewhere (a backend's arena, say).
struct Q8View {
  std::span<const int8_t> values;  // i8 [n]
  std::span<const float> scales;   // f32 [n / group_size]
  int64_t group_size = 0;
  Q8View() = default;
  Q8View(std::span<const int8_t> v, std::span<const float> s, int64_t gs)
      : values(v), scales(s), group_size(gs) {}
  Q8View(const Q8Vector& v)  // NOLINT: implicit, a Q8Vector is viewed in place
      : values(v.values), scales(v.scales), group_size(v.group_size) {}
};

// runq.c's quantize: per group, scale = max|x| / 127 and value = round(x / scale)
// (half away from zero). A group of zeros gets scale 0 and values 0.
// x.size() must equal out.values.size().
void quantize_activations(std::span<const float> x, Q8Vector& out);
// The same into caller-owned storage: values.size() == x.size(), scales.size()
// == x.size() / group_size.
void quantize_activations(std::span<const float> x, std::span<int8_t> values,
                          std::span<float> scales, int64_t group_size);
// The same with the kernel of `level` (the avx512 one where asked and the CPU
// runs it, else the portable one): every level gives the same bits. The
// overload above takes simd_level(); tests compare the levels.
void quantize_activations(std::span<const float> x, std::span<int8_t> values,
                          std::span<float> scales, int64_t group_size, SimdLevel level);

// Rows [row_begin, row_end) of y = W x for W [rows, cols] in Q8_0 and x
// quantized with the same group size: out[r - row_begin] = sum over groups g,
// in order, of float(int32 dot of group g) * w_scale * x_scale, in f32 (runq.c's
// matmul). Both kernels give bit-identical results.
void q8_matvec_rows(std::span<float> out, const QuantizedTensor& w, const Q8Vector& x,
                    int64_t row_begin, int64_t row_end, KernelSet kernel);
// The same for a vector held elsewhere; bit-identical results.
void q8_matvec_rows(std::span<float> out, const QuantizedTensor& w, const Q8View& x,
                    int64_t row_begin, int64_t row_end, KernelSet kernel);

// A batch of quantized vectors held back to back elsewhere (a backend's arena,
// say): vector t's values are values[t * cols, (t + 1) * cols) and its scales
// scales[t * groups, (t + 1) * groups), groups = cols / group_size.
struct Q8BatchView {
  std::span<const int8_t> values;  // i8 [n, cols]
  std::span<const float> scales;   // f32 [n, cols / group_size]
  int64_t cols = 0;
  int64_t group_size = 0;
};

// The same for a batch of vectors (a prompt): out[t * out_stride + r] for
// rows r in [row_begin, row_end) and every vector t. Each weight row is read
// once for the whole batch; each (row, vector) result equals q8_matvec_rows'.
// The VNNI kernel works on blocks of 16 vectors and packs the batch for them
// on every call: ranges of a few dozen rows or more amortize that.
void q8_matmat_rows(std::span<float> out, int64_t out_stride, const QuantizedTensor& w,
                    std::span<const Q8Vector> x, int64_t row_begin, int64_t row_end,
                    KernelSet kernel);
// The same for a batch held back to back. Throws Error unless group_size > 0
// divides cols and the spans hold a whole number of vectors, as many values
// as scales.
void q8_matmat_rows(std::span<float> out, int64_t out_stride, const QuantizedTensor& w,
                    const Q8BatchView& x, int64_t row_begin, int64_t row_end, KernelSet kernel);

// out[i] = values[i] * scales[i / group_size].
void dequantize(const QuantizedTensor& t, std::span<float> out);

// export.py's quantize_q80 over consecutive groups of `group_size`: scale =
// max|w| / 127, value = round(w / scale) (half to even, as torch.round).
// Returns the largest |dequantized - w|.
float quantize_q80(std::span<const float> w, int64_t group_size, std::span<int8_t> values,
                   std::span<float> scales);

}  // namespace llama
