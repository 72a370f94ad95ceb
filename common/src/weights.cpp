// Layout conversion between flat and per-layer weight views.
#include "llama/weights.hpp"

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

LayerTensors slice_layer(const LayerTensors& flat, int64_t n_layers, int64_t l) {
  LayerTensors out;
  for (Member m : kMembers) {
    const size_t per = (flat.*m).size() / static_cast<size_t>(n_layers);
    out.*m = (flat.*m).subspan(static_cast<size_t>(l) * per, per);
  }
  return out;
}

}  // namespace

LayerTensors TransformerWeights::layer(const Config& config, int64_t l) const {
  if (l < 0 || l >= config.n_layers) throw Error("layer index out of range");
  if (layout == WeightLayout::per_layer) return layers.at(static_cast<size_t>(l));
  return slice_layer(flat, config.n_layers, l);
}

TransformerWeights to_per_layer(const TransformerWeights& w, const Config& config) {
  if (w.layout == WeightLayout::per_layer) return w;
  TransformerWeights out = w;
  out.layout = WeightLayout::per_layer;
  out.flat = {};
  out.layers.clear();
  for (int64_t l = 0; l < config.n_layers; ++l) out.layers.push_back(w.layer(config, l));
  return out;
}

TransformerWeights to_flat(const TransformerWeights& w, const Config& config) {
  if (w.layout == WeightLayout::flat) return w;
  if (w.layers.size() != static_cast<size_t>(config.n_layers)) {
    throw Error("per-layer weights hold " + std::to_string(w.layers.size()) +
                " layers, config says " + std::to_string(config.n_layers));
  }
  TransformerWeights out = w;
  out.layout = WeightLayout::flat;
  out.layers.clear();

  // Contiguous when every layer's tensor starts where the previous one ends.
  auto contiguous = [&](Member m) {
    for (size_t l = 1; l < w.layers.size(); ++l) {
      const auto& prev = w.layers[l - 1].*m;
      if (prev.data() + prev.size() != (w.layers[l].*m).data()) return false;
    }
    return true;
  };
  size_t copy_floats = 0;
  for (Member m : kMembers) {
    if (!contiguous(m)) copy_floats += (w.layers[0].*m).size() * w.layers.size();
  }
  auto owned = std::make_shared<std::vector<float>>(copy_floats);
  size_t cursor = 0;
  for (Member m : kMembers) {
    const size_t per = (w.layers[0].*m).size();
    if (contiguous(m)) {
      out.flat.*m = {(w.layers[0].*m).data(), per * w.layers.size()};
      continue;
    }
    float* dst = owned->data() + cursor;
    for (const LayerTensors& layer : w.layers) {
      if ((layer.*m).size() != per) throw Error("per-layer weights differ in shape across layers");
      std::memcpy(dst, (layer.*m).data(), per * sizeof(float));
      dst += per;
    }
    out.flat.*m = {owned->data() + cursor, per * w.layers.size()};
    cursor += per * w.layers.size();
  }
  if (copy_floats > 0) {
    // Keep both the original storage and the copy alive.
    auto both =
        std::make_shared<std::pair<std::shared_ptr<const void>, std::shared_ptr<const void>>>(
            w.storage, owned);
    out.storage = both;
  }
  return out;
}

TransformerWeights with_layout(const TransformerWeights& w, const Config& config,
                               WeightLayout layout) {
  return layout == WeightLayout::flat ? to_flat(w, config) : to_per_layer(w, config);
}

}  // namespace llama
