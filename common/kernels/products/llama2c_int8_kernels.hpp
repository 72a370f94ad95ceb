// Private to the core: the Q8_0 kernels behind q8_matvec_rows,
// q8_matmat_rows and quantize_activations.
#pragma once

#include <cstdint>
#include <span>

#include "llama/kernels/products/llama2c_int8.hpp"

namespace llama::detail {

// quantize_activations of `groups` groups of group_size values at the avx512
// level (x86/llama2c_int8_quantize.cpp): each group's values and scale, the
// portable loop's bits. The caller checks the CPU.
void quantize_groups_avx512(const float* x, int64_t groups, int64_t group_size, int8_t* values,
                            float* scales);

// runq.c's matmul for rows [row_begin, row_end), plain loops.
void q8_matvec_rows_portable(std::span<float> out, const QuantizedTensor& w, const Q8View& x,
                             int64_t row_begin, int64_t row_end);
// The same with AVX-512 VNNI; bit-identical results. The caller checks the CPU.
void q8_matvec_rows_vnni(std::span<float> out, const QuantizedTensor& w, const Q8View& x,
                         int64_t row_begin, int64_t row_end);

// The same with AVX2 (x86/llama2c_int8_avx2.cpp, KernelSet::avx2's body) and
// with AVX-VNNI besides (KernelSet::avx_vnni's); bit-identical results. The
// caller checks the CPU.
void q8_matvec_rows_avx2(std::span<float> out, const QuantizedTensor& w, const Q8View& x,
                         int64_t row_begin, int64_t row_end);
void q8_matvec_rows_avxvnni(std::span<float> out, const QuantizedTensor& w, const Q8View& x,
                            int64_t row_begin, int64_t row_end);

// A batch of quantized vectors however the caller holds it: a span of
// Q8Vector (`vectors`), or back to back (`values`, `scales`).
struct Q8Batch {
  const Q8Vector* vectors = nullptr;
  const int8_t* values = nullptr;  // i8 [n, cols] when vectors is null
  const float* scales = nullptr;   // f32 [n, cols / group_size] when vectors is null
  int64_t n = 0, cols = 0, group_size = 0;

  const int8_t* values_of(int64_t t) const {
    return vectors != nullptr ? vectors[t].values.data() : values + t * cols;
  }
  const float* scales_of(int64_t t) const {
    return vectors != nullptr ? vectors[t].scales.data() : scales + t * (cols / group_size);
  }
};

// q8_matmat_rows' two versions: out[t * out_stride + r] for rows [row_begin,
// row_end) and every vector t of a non-empty batch.
void q8_matmat_rows_portable(std::span<float> out, int64_t out_stride, const QuantizedTensor& w,
                             const Q8Batch& x, int64_t row_begin, int64_t row_end);
void q8_matmat_rows_vnni(std::span<float> out, int64_t out_stride, const QuantizedTensor& w,
                         const Q8Batch& x, int64_t row_begin, int64_t row_end);
// The same with AVX2 (x86/llama2c_int8_avx2_batch.cpp, KernelSet::avx2's
// body) and with AVX-VNNI besides (KernelSet::avx_vnni's); bit-identical
// results. The caller checks the CPU.
void q8_matmat_rows_avx2(std::span<float> out, int64_t out_stride, const QuantizedTensor& w,
                         const Q8Batch& x, int64_t row_begin, int64_t row_end);
void q8_matmat_rows_avxvnni(std::span<float> out, int64_t out_stride, const QuantizedTensor& w,
                            const Q8Batch& x, int64_t row_begin, int64_t row_end);
// The same products combined in GGUF Q4_0's order, val = fma(float(dot),
// w_scale * x_scale, val) per group (q8_input_row_dot_portable's), for Q4_0
// rows unpacked to i8 (code - 8) and f32 scales in groups of 32.
void q8_matmat_rows_q4_order_avx2(std::span<float> out, int64_t out_stride,
                                  const QuantizedTensor& w, const Q8Batch& x, int64_t row_begin,
                                  int64_t row_end);
void q8_matmat_rows_q4_order_avxvnni(std::span<float> out, int64_t out_stride,
                                     const QuantizedTensor& w, const Q8Batch& x, int64_t row_begin,
                                     int64_t row_end);

// The AMX-INT8 tiles (x86/int8_tiles_amx.cpp), in runq.c's chain and in Q4_0's;
// bit-identical results. The caller checks amx_int8_enabled() and the group size.
void q8_matmat_rows_amx(std::span<float> out, int64_t out_stride, const QuantizedTensor& w,
                        const Q8Batch& x, int64_t row_begin, int64_t row_end);
void q8_matmat_rows_q4_order_amx(std::span<float> out, int64_t out_stride, const QuantizedTensor& w,
                                 const Q8Batch& x, int64_t row_begin, int64_t row_end);
// Groups the tiles take: a tdpbssd multiplies k = 4..64 bytes (a multiple of 4)
// of each row, so a group is one of those, or a multiple of 64 taken 64 at a time.
inline bool amx_int8_takes_group_size(int64_t group_size) {
  return group_size > 0 && group_size % 4 == 0 && (group_size <= 64 || group_size % 64 == 0);
}
// Batches from this many vectors take the tiles (and the VNNI kernel's lanes):
// fewer go vector by vector.
inline constexpr int64_t kMinTileBatch = 4;

}  // namespace llama::detail
