// Private to the core: the Q8_0 matrix-vector kernels behind q8_matvec_rows.
#pragma once

#include <cstdint>
#include <span>

#include "llama/q8.hpp"

namespace llama::detail {

// runq.c's matmul for rows [row_begin, row_end), plain loops.
void q8_matvec_rows_portable(std::span<float> out, const QuantizedTensor& w, const Q8View& x,
                             int64_t row_begin, int64_t row_end);
// The same with AVX-512 VNNI; bit-identical results. The caller checks the CPU.
void q8_matvec_rows_vnni(std::span<float> out, const QuantizedTensor& w, const Q8View& x,
                         int64_t row_begin, int64_t row_end);

// q8_matmat_rows' two versions.
void q8_matmat_rows_portable(std::span<float> out, int64_t out_stride, const QuantizedTensor& w,
                             std::span<const Q8Vector> x, int64_t row_begin, int64_t row_end);
void q8_matmat_rows_vnni(std::span<float> out, int64_t out_stride, const QuantizedTensor& w,
                         std::span<const Q8Vector> x, int64_t row_begin, int64_t row_end);

}  // namespace llama::detail
