// Copying a Q8_0 model's matrices into huge pages.
#include "quantized_copies.hpp"

#include "llama/checked_math.hpp"

namespace llama::graph {
namespace {

// Every matrix in copy order: each layer's wq, wk, wv, wo, w1, w2, w3, then wcls.
template <typename Fn>
void for_each_matrix(const TransformerWeights& w, const Config& c, Fn&& fn) {
  for (int64_t l = 0; l < c.n_layers; ++l) {
    const QuantizedLayerTensors t = w.quantized_layer(c, l);
    for (const QuantizedTensor* m : {&t.wq, &t.wk, &t.wv, &t.wo, &t.w1, &t.w2, &t.w3}) fn(*m);
  }
  fn(w.q_wcls);
}

}  // namespace

int64_t QuantizedCopies::bytes(const TransformerWeights& w, const Config& c) {
  int64_t total = 0;
  for_each_matrix(w, c, [&](const QuantizedTensor& m) {
    total = checked_add(total, static_cast<int64_t>(m.values.size_bytes()), "int8 copies");
    total = checked_add(total, static_cast<int64_t>(m.scales.size_bytes()), "int8 copies");
  });
  return total;
}

QuantizedCopies::QuantizedCopies(const TransformerWeights& w, const Config& c,
                                 const CopiedFn& copied) {
  size_t values = 0, scales = 0;
  for_each_matrix(w, c, [&](const QuantizedTensor& m) {
    values += m.values.size();
    scales += m.scales.size();
  });
  values_ = HugePageArray<int8_t>(values);
  scales_ = HugePageArray<float>(scales);
  CopyWriter<int8_t> value_out(values_.span(), copied);
  CopyWriter<float> scale_out(scales_.span(), copied);
  const auto copy = [&](const QuantizedTensor& m, const char* name) {
    const size_t v = value_out.used(), s = scale_out.used();
    value_out.append(m.values, static_cast<int64_t>(m.values.size()), name);
    scale_out.append(m.scales, static_cast<int64_t>(m.scales.size()), name);
    return QuantizedTensor{value_out.since(v), scale_out.since(s), m.group_size};
  };
  layers_.reserve(static_cast<size_t>(c.n_layers));
  for (int64_t l = 0; l < c.n_layers; ++l) {
    const QuantizedLayerTensors t = w.quantized_layer(c, l);
    layers_.push_back({copy(t.wq, "wq"), copy(t.wk, "wk"), copy(t.wv, "wv"), copy(t.wo, "wo"),
                       copy(t.w1, "w1"), copy(t.w2, "w2"), copy(t.w3, "w3")});
  }
  classifier_ = copy(w.q_wcls, "wcls");
}

}  // namespace llama::graph
