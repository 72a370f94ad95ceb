// Per-tensor statistics for --verify-checkpoint: llama2.c f32 and Q8_0,
// Hugging Face F32/BF16/F16.
#include "verify_checkpoint.hpp"

#include <cstring>
#include <iomanip>
#include <string>
#include <vector>

#include "llama/kernels/numbers/dequantize.hpp"
#include "verify_stats.hpp"

namespace llama::cli {
namespace {

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
  NonFiniteTally tally;
  for (const TensorInfo& t : ck.tensors()) {
    out << std::left << std::setw(16) << t.name << " [" << shape_of(t) << "]";
    if (t.quantized.empty()) {
      ValueStats s;
      for (float v : t.data) s.add(v);
      out << "  f32";
      s.print(out);
      tally.add(ck.model().source, t.name, s);
      continue;
    }
    ValueStats scales, values;
    for (const QuantizedTensor& q : t.quantized) {
      for (float s : q.scales) scales.add(s);
      const auto gs = static_cast<size_t>(q.group_size);
      for (size_t i = 0; i < q.values.size(); ++i) {
        values.add(static_cast<double>(static_cast<float>(q.values[i]) * q.scales[i / gs]));
      }
    }
    out << "  Q8_0  scales [" << scales.lo << ", " << scales.hi << "]";
    if (!scales.finite()) out << " (" << scales.not_finite() << " not finite)";
    out << "  dequantized";
    values.print(out, " ");
    tally.add(ck.model().source, t.name, values);
  }
  return tally.finish(out);
}

int verify_checkpoint(const HfModel& hf, std::ostream& out) {
  out << hf.describe();
  NonFiniteTally tally;
  std::vector<float> row;  // f32 [cols]: one row widened at a time
  for (const HfTensor& t : hf.checkpoint.tensors()) {
    const Tensor view = [&] {
      // The stored dtype, whatever the loader made of it (a view of the file).
      switch (t.tensor->dtype) {
        case SafetensorsDtype::BF16:
          return Tensor::view(t.spec.name, DType::bf16, t.spec.shape, t.tensor->bytes);
        case SafetensorsDtype::F16:
          return Tensor::view(t.spec.name, DType::f16, t.spec.shape, t.tensor->bytes);
        default:
          return Tensor::view(t.spec.name, DType::f32, t.spec.shape, t.tensor->bytes);
      }
    }();
    ValueStats s;
    row.resize(static_cast<size_t>(view.cols()));
    for (int64_t r = 0; r < view.rows(); ++r) {
      if (view.dtype == DType::f32) {
        // dequantize_rows wants f32 views aligned; read the bytes as they lie.
        for (size_t i = 0; i < row.size(); ++i) {
          std::memcpy(&row[i], view.data.data() + (static_cast<size_t>(r) * row.size() + i) * 4, 4);
        }
      } else {
        dequantize_rows(view, r, r + 1, row);
      }
      for (float v : row) s.add(v);
    }
    out << std::left << std::setw(48) << t.spec.name << " " << std::setw(5)
        << to_string(t.tensor->dtype) << " " << view.shape_string();
    s.print(out);
    tally.add(t.file->source(), t.spec.name, s);
  }
  return tally.finish(out);
}

}  // namespace llama::cli
