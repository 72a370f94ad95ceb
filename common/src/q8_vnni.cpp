// The AVX-512 VNNI Q8_0 matrix-vector kernel (decode): one row_dot per row
// (q8_vnni_ops.hpp). Groups whose size is a multiple of 64 are summed 16 at a
// time and reduced together instead of one horizontal sum per group; the f32
// part stays runq.c's sequential FMA chain per row, so results equal the
// portable kernel's bit for bit.
#include "q8_kernels.hpp"
#include "q8_vnni_ops.hpp"

namespace llama::detail {

LLAMA_VNNI void q8_matvec_rows_vnni(std::span<float> out, const QuantizedTensor& w, const Q8View& x,
                                    int64_t row_begin, int64_t row_end) {
  const auto cols = static_cast<int64_t>(x.values.size());
  const int64_t gs = x.group_size, groups = cols / gs;
  for (int64_t r = row_begin; r < row_end; ++r) {
    out[static_cast<size_t>(r - row_begin)] =
        vnni::row_dot(w.values.data() + r * cols, w.scales.data() + r * groups, x.values.data(),
                      x.scales.data(), cols, gs);
  }
}

}  // namespace llama::detail
