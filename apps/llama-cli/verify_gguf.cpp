// Per-tensor statistics of a GGUF file's dequantized values, a few rows at a
// time so a multi-GiB file needs no f32 copy.
#include "verify_gguf.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <limits>
#include <vector>

#include "llama/kernels/numbers/dequantize.hpp"

namespace llama::cli {

int verify_gguf(const gguf::GgufModel& g, std::ostream& out) {
  out << gguf::describe(g);
  bool all_finite = true;
  std::vector<float> rows;  // f32 [chunk rows, cols]
  g.model.weights.for_each([&](const Tensor& t) {
    double lo = std::numeric_limits<double>::infinity(), hi = -lo, sum = 0;
    bool finite = true;
    const int64_t chunk = std::max<int64_t>(1, 65536 / t.cols());
    rows.resize(static_cast<size_t>(std::min(chunk, t.rows()) * t.cols()));
    for (int64_t r = 0; r < t.rows(); r += chunk) {
      const int64_t end = std::min(t.rows(), r + chunk);
      dequantize_rows(t, r, end, rows);
      for (size_t i = 0; i < static_cast<size_t>((end - r) * t.cols()); ++i) {
        const double v = rows[i];
        if (!std::isfinite(v)) {
          finite = false;
          continue;
        }
        lo = std::min(lo, v);
        hi = std::max(hi, v);
        sum += v;
      }
    }
    all_finite = all_finite && finite;
    out << std::left << std::setw(26) << t.name << " " << std::setw(5)
        << gguf::gguf_type_name(t.dtype) << " " << t.shape_string() << "  min " << lo << "  max "
        << hi << "  mean " << sum / static_cast<double>(t.elements())
        << (finite ? "  finite\n" : "  NOT FINITE\n");
  });
  out << (all_finite ? "all values finite\n" : "some values are not finite\n");
  return all_finite ? 0 : 1;
}

}  // namespace llama::cli
