// Per-tensor statistics of a GGUF file's dequantized values, a few rows at a
// time so a multi-GiB file needs no f32 copy.
#include "verify_gguf.hpp"

#include <algorithm>
#include <iomanip>
#include <vector>

#include "llama/kernels/numbers/dequantize.hpp"
#include "verify_stats.hpp"

namespace llama::cli {

int verify_gguf(const gguf::GgufModel& g, std::ostream& out) {
  out << gguf::describe(g);
  NonFiniteTally tally;
  std::vector<float> rows;  // f32 [chunk rows, cols]
  g.model.weights.for_each([&](const Tensor& t) {
    ValueStats s;
    const int64_t chunk = std::max<int64_t>(1, 65536 / t.cols());
    rows.resize(static_cast<size_t>(std::min(chunk, t.rows()) * t.cols()));
    for (int64_t r = 0; r < t.rows(); r += chunk) {
      const int64_t end = std::min(t.rows(), r + chunk);
      dequantize_rows(t, r, end, rows);
      for (size_t i = 0; i < static_cast<size_t>((end - r) * t.cols()); ++i) s.add(rows[i]);
    }
    out << std::left << std::setw(26) << t.name << " " << std::setw(5)
        << gguf::gguf_type_name(t.dtype) << " " << t.shape_string();
    s.print(out);
    tally.add(g.model.source, t.name, s);
  });
  return tally.finish(out);
}

}  // namespace llama::cli
