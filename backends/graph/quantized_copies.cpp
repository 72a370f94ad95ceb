// Copying a Q8_0 model's matrices into huge pages.
#include "quantized_copies.hpp"

#include "llama/checked_math.hpp"

namespace llama::graph {
namespace {

// The matrices of one part of the copy, in copy order: part 0 is the
// classifier, part 1 + l layer l's wq, wk, wv, wo, w1, w2, w3.
std::vector<QuantizedTensor> part_matrices(const TransformerWeights& w, const Config& c,
                                           size_t part) {
  if (part == 0) return {w.q_wcls};
  const QuantizedLayerTensors t = w.quantized_layer(c, static_cast<int64_t>(part - 1));
  return {t.wq, t.wk, t.wv, t.wo, t.w1, t.w2, t.w3};
}

}  // namespace

int64_t QuantizedCopies::bytes(const TransformerWeights& w, const Config& c) {
  int64_t total = 0;
  for (size_t part = 0; part <= static_cast<size_t>(c.n_layers); ++part) {
    for (const QuantizedTensor& m : part_matrices(w, c, part)) {
      total = checked_add(total, static_cast<int64_t>(m.values.size_bytes()), "int8 copies");
      total = checked_add(total, static_cast<int64_t>(m.scales.size_bytes()), "int8 copies");
    }
  }
  return total;
}

QuantizedCopies::QuantizedCopies(const TransformerWeights& w, const Config& c,
                                 const CopiedFn& copied, const PartsFn& run_parts) {
  // The layout follows the parts (part_matrices).
  const auto n = static_cast<size_t>(c.n_layers);
  std::vector<size_t> value_at(n + 2, 0), scale_at(n + 2, 0);  // offsets of each part, then the end
  for (size_t part = 0; part <= n; ++part) {
    value_at[part + 1] = value_at[part];
    scale_at[part + 1] = scale_at[part];
    for (const QuantizedTensor& m : part_matrices(w, c, part)) {
      value_at[part + 1] += m.values.size();
      scale_at[part + 1] += m.scales.size();
    }
  }
  values_ = HugePageArray<int8_t>(value_at[n + 1]);
  scales_ = HugePageArray<float>(scale_at[n + 1]);
  // Where each matrix's copy goes, before anything is copied.
  std::vector<std::vector<QuantizedTensor>> copies(n + 1);
  for (size_t part = 0; part <= n; ++part) {
    size_t v = value_at[part], s = scale_at[part];
    for (const QuantizedTensor& m : part_matrices(w, c, part)) {
      copies[part].push_back({values_.span().subspan(v, m.values.size()),
                              scales_.span().subspan(s, m.scales.size()), m.group_size});
      v += m.values.size();
      s += m.scales.size();
    }
  }
  classifier_ = copies[0][0];
  layers_.resize(n);
  for (size_t l = 0; l < n; ++l) {
    const std::vector<QuantizedTensor>& m = copies[l + 1];
    layers_[l] = {m[0], m[1], m[2], m[3], m[4], m[5], m[6]};
  }
  run_parts(c.n_layers + 1, [&](int64_t p) {
    const auto part = static_cast<size_t>(p);
    const size_t values = value_at[part + 1] - value_at[part];
    const size_t scales = scale_at[part + 1] - scale_at[part];
    CopyWriter<int8_t> value_out(values_.span().subspan(value_at[part], values), copied);
    CopyWriter<float> scale_out(scales_.span().subspan(scale_at[part], scales), copied);
    for (const QuantizedTensor& m : part_matrices(w, c, part)) {
      value_out.append(m.values, static_cast<int64_t>(m.values.size()), "int8 values");
      scale_out.append(m.scales, static_cast<int64_t>(m.scales.size()), "int8 scales");
    }
  });
}

}  // namespace llama::graph
