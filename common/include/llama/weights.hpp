// A model's weights as typed tensor views (tensor.hpp), one set per layer,
// whatever the file format: readers fill them, backends read them. Checks
// that every tensor has the shape the Config implies, and the refusal of a
// dtype a backend does not run.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "llama/config.hpp"
#include "llama/tensor.hpp"

namespace llama {

// One transformer layer. Matrices are row-major [out, in]: y = W x.
struct LayerWeights {
  Tensor attention_norm;  // [dim] RMSNorm gain before attention
  Tensor wq;              // [q_dim, dim]
  Tensor wk;              // [kv_dim, dim]
  Tensor wv;              // [kv_dim, dim]
  Tensor wo;              // [dim, q_dim]
  Tensor ffn_norm;        // [dim] RMSNorm gain before the feed-forward
  Tensor w1;              // [hidden_dim, dim] gate
  Tensor w2;              // [dim, hidden_dim] down
  Tensor w3;              // [hidden_dim, dim] up
};

// The members of LayerWeights in order, for code that walks them all.
inline constexpr Tensor LayerWeights::*kLayerTensors[] = {&LayerWeights::attention_norm,
                                                          &LayerWeights::wq,
                                                          &LayerWeights::wk,
                                                          &LayerWeights::wv,
                                                          &LayerWeights::wo,
                                                          &LayerWeights::ffn_norm,
                                                          &LayerWeights::w1,
                                                          &LayerWeights::w2,
                                                          &LayerWeights::w3};

struct ModelWeights {
  Tensor
      token_embedding;  // [vocab_size, dim]; a backend reads rows (kernels/numbers/dequantize.hpp)
  std::vector<LayerWeights> layers;  // n_layers
  Tensor final_norm;                 // [dim]
  Tensor classifier;  // [vocab_size, dim]; tied embeddings: the same view as token_embedding
  // Keeps the memory behind the views alive (the file mapping, owned copies).
  std::shared_ptr<const void> storage;

  // Every distinct tensor once, in order: embedding, each layer's, final
  // norm, classifier (skipped when it is the embedding).
  void for_each(const std::function<void(const Tensor&)>& visit) const;
  // True when the classifier is the embedding's view.
  bool tied() const;
  // Bytes of every distinct tensor (data and scales).
  int64_t bytes() const;
  // The dtypes the tensors use.
  DTypeSet dtypes() const;
};

// Throws Error ("<source>: tensor <name>: ...") unless every tensor has the
// shape `config` implies, the norms are in a float dtype, and a tied model's
// classifier is its embedding.
void validate_weights(const ModelWeights& weights, const Config& config, const std::string& source);

// A backend's prepare starts with this: throws Error "<backend>: tensor
// <name> is <dtype>, which <backend> does not run (it runs <dtypes>)" for the
// first tensor whose dtype `supported` lacks.
void require_dtypes(const ModelWeights& weights, const std::string& backend, DTypeSet supported);

}  // namespace llama
