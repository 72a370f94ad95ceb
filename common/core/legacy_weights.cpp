// TRANSITIONAL: layout conversion between flat and per-layer weight views, f32
// and Q8_0 (legacy_weights.hpp).
#include "llama/legacy_weights.hpp"

#include <array>
#include <cstring>

#include "llama/error.hpp"

namespace llama {
namespace {

using Member = std::span<const float> LayerTensors::*;
constexpr std::array<Member, 9> kMembers = {
    &LayerTensors::rms_att, &LayerTensors::wq, &LayerTensors::wk,
    &LayerTensors::wv,      &LayerTensors::wo, &LayerTensors::rms_ffn,
    &LayerTensors::w1,      &LayerTensors::w2, &LayerTensors::w3};

using QMember = QuantizedTensor QuantizedLayerTensors::*;
constexpr std::array<QMember, 7> kQMembers = {
    &QuantizedLayerTensors::wq, &QuantizedLayerTensors::wk, &QuantizedLayerTensors::wv,
    &QuantizedLayerTensors::wo, &QuantizedLayerTensors::w1, &QuantizedLayerTensors::w2,
    &QuantizedLayerTensors::w3};

template <typename T>
std::span<const T> slice(std::span<const T> all, int64_t n_layers, int64_t l) {
  const size_t per = all.size() / static_cast<size_t>(n_layers);
  return all.subspan(static_cast<size_t>(l) * per, per);
}

LayerTensors slice_layer(const LayerTensors& flat, int64_t n_layers, int64_t l) {
  LayerTensors out;
  for (Member m : kMembers) out.*m = slice(flat.*m, n_layers, l);
  return out;
}

QuantizedLayerTensors slice_qlayer(const QuantizedLayerTensors& flat, int64_t n_layers, int64_t l) {
  QuantizedLayerTensors out;
  for (QMember m : kQMembers) {
    out.*m = {slice((flat.*m).values, n_layers, l), slice((flat.*m).scales, n_layers, l),
              (flat.*m).group_size};
  }
  return out;
}

// One span over every layer's `part`: the original memory when the layers lie
// back to back, else a copy kept alive through `owned`.
template <typename T, typename Part, typename Get>
std::span<const T> join_layers(const std::vector<Part>& layers, Get part,
                               std::vector<std::shared_ptr<const void>>& owned) {
  const size_t per = part(layers[0]).size();
  bool contiguous = true;
  for (size_t l = 1; l < layers.size(); ++l) {
    if (part(layers[l]).size() != per) {
      throw Error("per-layer weights differ in shape across layers");
    }
    const auto prev = part(layers[l - 1]);
    if (prev.data() + prev.size() != part(layers[l]).data()) contiguous = false;
  }
  if (contiguous) return {part(layers[0]).data(), per * layers.size()};
  auto copy = std::make_shared<std::vector<T>>(per * layers.size());
  T* dst = copy->data();
  for (const Part& layer : layers) {
    if (per > 0) std::memcpy(dst, part(layer).data(), per * sizeof(T));
    dst += per;
  }
  owned.push_back(copy);
  return *copy;
}

}  // namespace

LayerTensors TransformerWeights::layer(const Config& config, int64_t l) const {
  if (l < 0 || l >= config.n_layers) throw Error("layer index out of range");
  if (layout == WeightLayout::per_layer) return layers.at(static_cast<size_t>(l));
  return slice_layer(flat, config.n_layers, l);
}

QuantizedLayerTensors TransformerWeights::quantized_layer(const Config& config, int64_t l) const {
  if (format != WeightFormat::q8_0) throw Error("quantized_layer: the weights are not Q8_0");
  if (l < 0 || l >= config.n_layers) throw Error("layer index out of range");
  if (layout == WeightLayout::per_layer) return q_layers.at(static_cast<size_t>(l));
  return slice_qlayer(q_flat, config.n_layers, l);
}

TransformerWeights to_per_layer(const TransformerWeights& w, const Config& config) {
  if (w.layout == WeightLayout::per_layer) return w;
  TransformerWeights out = w;
  out.layout = WeightLayout::per_layer;
  out.flat = {};
  out.q_flat = {};
  out.layers.clear();
  out.q_layers.clear();
  for (int64_t l = 0; l < config.n_layers; ++l) {
    out.layers.push_back(w.layer(config, l));
    if (w.format == WeightFormat::q8_0) out.q_layers.push_back(w.quantized_layer(config, l));
  }
  return out;
}

TransformerWeights to_flat(const TransformerWeights& w, const Config& config) {
  if (w.layout == WeightLayout::flat) return w;
  if (w.layers.size() != static_cast<size_t>(config.n_layers) || w.layers.empty()) {
    throw Error("per-layer weights hold " + std::to_string(w.layers.size()) +
                " layers, config says " + std::to_string(config.n_layers));
  }
  if (w.format == WeightFormat::q8_0 && w.q_layers.size() != w.layers.size()) {
    throw Error("per-layer Q8_0 weights hold " + std::to_string(w.q_layers.size()) +
                " quantized layers, config says " + std::to_string(config.n_layers));
  }
  TransformerWeights out = w;
  out.layout = WeightLayout::flat;
  out.layers.clear();
  out.q_layers.clear();
  std::vector<std::shared_ptr<const void>> owned;
  for (Member m : kMembers) {
    out.flat.*m = join_layers<float>(
        w.layers, [m](const LayerTensors& t) { return t.*m; }, owned);
  }
  if (w.format == WeightFormat::q8_0) {
    for (QMember m : kQMembers) {
      QuantizedTensor& q = out.q_flat.*m;
      q.values = join_layers<int8_t>(
          w.q_layers, [m](const QuantizedLayerTensors& t) { return (t.*m).values; }, owned);
      q.scales = join_layers<float>(
          w.q_layers, [m](const QuantizedLayerTensors& t) { return (t.*m).scales; }, owned);
      q.group_size = (w.q_layers[0].*m).group_size;
    }
  }
  if (!owned.empty()) {
    // Keep the original storage and the copies alive together.
    owned.push_back(w.storage);
    out.storage = std::make_shared<std::vector<std::shared_ptr<const void>>>(std::move(owned));
  }
  return out;
}

void require_f32_weights(const TransformerWeights& weights, const std::string& backend) {
  if (weights.format != WeightFormat::f32) {
    throw Error(backend +
                ": Q8_0 (int8) weights are not supported by this backend; use blas or "
                "reference, or convert the checkpoint to f32 with llama-convert --to v0");
  }
}

TransformerWeights with_layout(const TransformerWeights& w, const Config& config,
                               WeightLayout layout) {
  return layout == WeightLayout::flat ? to_flat(w, config) : to_per_layer(w, config);
}

}  // namespace llama
