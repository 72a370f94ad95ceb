// llama2.c's tensor table as typed per-layer views.
#include "llama2c_weights.hpp"

#include "llama/error.hpp"

namespace llama {
namespace {

const TensorInfo& find(const std::vector<TensorInfo>& tensors, const std::string& name) {
  for (const TensorInfo& t : tensors) {
    if (t.name == name) return t;
  }
  throw Error("llama2.c checkpoint: no tensor " + name);
}

// Layer `l` of a layered tensor (or the whole of an unlayered one when l < 0).
Tensor layer_view(const TensorInfo& t, int64_t l, int64_t n_layers) {
  std::vector<int64_t> shape = t.shape;
  std::string name = t.name;
  const bool layered = l >= 0;
  if (layered) {
    shape.erase(shape.begin());                              // the leading n_layers
    name.append("[").append(std::to_string(l)).append("]");  // not +: GCC 12 -Wrestrict
  }
  if (!t.quantized.empty()) {
    const QuantizedTensor& q = t.quantized[static_cast<size_t>(layered ? l : 0)];
    return Tensor::q8_view(std::move(name), std::move(shape), q.values, q.scales, q.group_size);
  }
  std::span<const float> data = t.data;
  if (layered) {
    const size_t per = data.size() / static_cast<size_t>(n_layers);
    data = data.subspan(static_cast<size_t>(l) * per, per);
  }
  return Tensor::f32_view(std::move(name), std::move(shape), data);
}

}  // namespace

ModelWeights llama2c_weights(const std::vector<TensorInfo>& tensors, const Config& c,
                             std::shared_ptr<const void> storage) {
  ModelWeights w;
  const int64_t L = c.n_layers;
  w.token_embedding = layer_view(find(tensors, "token_embedding"), -1, L);
  w.final_norm = layer_view(find(tensors, "rms_final"), -1, L);
  w.classifier = c.shared_classifier ? w.token_embedding : layer_view(find(tensors, "wcls"), -1, L);
  const std::pair<Tensor LayerWeights::*, const char*> parts[] = {
      {&LayerWeights::attention_norm, "rms_att"},
      {&LayerWeights::wq, "wq"},
      {&LayerWeights::wk, "wk"},
      {&LayerWeights::wv, "wv"},
      {&LayerWeights::wo, "wo"},
      {&LayerWeights::ffn_norm, "rms_ffn"},
      {&LayerWeights::w1, "w1"},
      {&LayerWeights::w2, "w2"},
      {&LayerWeights::w3, "w3"}};
  w.layers.resize(static_cast<size_t>(L));
  for (const auto& [member, name] : parts) {
    const TensorInfo& t = find(tensors, name);
    for (int64_t l = 0; l < L; ++l) w.layers[static_cast<size_t>(l)].*member = layer_view(t, l, L);
  }
  w.storage = std::move(storage);
  return w;
}

}  // namespace llama
