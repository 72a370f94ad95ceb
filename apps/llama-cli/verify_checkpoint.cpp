// Per-tensor statistics for --verify-checkpoint, f32 and Q8_0.
#include "verify_checkpoint.hpp"

#include <cmath>
#include <iomanip>
#include <limits>
#include <string>

namespace llama::cli {
namespace {

// Running min / max / sum over finite values, and whether any was not finite.
struct Stats {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  double sum = 0;
  int64_t count = 0;
  bool finite = true;

  void add(double v) {
    ++count;
    if (!std::isfinite(v)) {
      finite = false;
      return;
    }
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    sum += v;
  }
  double mean() const { return count > 0 ? sum / static_cast<double>(count) : 0.0; }
};

std::string shape_of(const TensorInfo& t) {
  std::string shape;
  for (int64_t d : t.shape) {
    if (!shape.empty()) shape += 'x';
    shape += std::to_string(d);
  }
  return shape;
}

}  // namespace

int verify_checkpoint(const Checkpoint& ck, std::ostream& out) {
  out << "checkpoint: " << ck.model().source << " (" << to_string(ck.format());
  if (ck.format() == CheckpointFormat::v2) out << ", group size " << ck.group_size();
  out << ")\nconfig: " << ck.config().to_string() << "\n";
  bool all_finite = true;
  for (const TensorInfo& t : ck.tensors()) {
    out << std::left << std::setw(16) << t.name << " [" << shape_of(t) << "]";
    if (t.quantized.empty()) {
      Stats s;
      for (float v : t.data) s.add(v);
      out << "  f32  min " << s.lo << "  max " << s.hi << "  mean " << s.mean();
      all_finite = all_finite && s.finite;
      out << (s.finite ? "  finite\n" : "  NOT FINITE\n");
      continue;
    }
    Stats scales, values;
    for (const QuantizedTensor& q : t.quantized) {
      for (float s : q.scales) scales.add(s);
      const auto gs = static_cast<size_t>(q.group_size);
      for (size_t i = 0; i < q.values.size(); ++i) {
        values.add(static_cast<double>(static_cast<float>(q.values[i]) * q.scales[i / gs]));
      }
    }
    const bool finite = scales.finite && values.finite;
    all_finite = all_finite && finite;
    out << "  Q8_0  scales [" << scales.lo << ", " << scales.hi << "]  dequantized min "
        << values.lo << "  max " << values.hi << "  mean " << values.mean()
        << (finite ? "  finite\n" : "  NOT FINITE\n");
  }
  out << (all_finite ? "all values finite\n" : "some values are not finite\n");
  return all_finite ? 0 : 1;
}

}  // namespace llama::cli
