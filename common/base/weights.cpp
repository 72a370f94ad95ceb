// ModelWeights: walking the tensors, shape validation against the Config, and
// the dtype refusal backends start prepare with.
#include "llama/weights.hpp"

#include "llama/checked_math.hpp"
#include "llama/error.hpp"

namespace llama {
namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
  Tensor t;
  t.shape = shape;
  return t.shape_string();
}

void expect_shape(const Tensor& t, const std::vector<int64_t>& shape, const char* role,
                  const std::string& source) {
  if (t.empty()) throw Error(source + ": missing tensor: " + role);
  if (t.shape != shape) {
    throw Error(source + ": tensor " + t.name + " (" + role + ") has shape " + t.shape_string() +
                ", the config implies " + shape_text(shape));
  }
}

void expect_float(const Tensor& t, const std::string& source) {
  if (!dtype_info(t.dtype).is_float) {
    throw Error(source + ": tensor " + t.name + " is " + to_string(t.dtype) +
                "; norm gains must be f32, bf16 or f16");
  }
}

}  // namespace

void ModelWeights::for_each(const std::function<void(const Tensor&)>& visit) const {
  visit(token_embedding);
  for (const LayerWeights& layer : layers) {
    for (Tensor LayerWeights::*m : kLayerTensors) visit(layer.*m);
  }
  visit(final_norm);
  if (!tied()) visit(classifier);
}

bool ModelWeights::tied() const {
  return classifier.data.data() == token_embedding.data.data() &&
         classifier.data.size() == token_embedding.data.size();
}

int64_t ModelWeights::bytes() const {
  int64_t total = 0;
  for_each([&](const Tensor& t) {
    total = checked_add(total, static_cast<int64_t>(t.data.size() + t.scales.size()), "weights");
  });
  return total;
}

DTypeSet ModelWeights::dtypes() const {
  DTypeSet set;
  for_each([&](const Tensor& t) { set.add(t.dtype); });
  return set;
}

void validate_weights(const ModelWeights& w, const Config& c, const std::string& source) {
  const int64_t dim = c.dim, q = c.q_dim(), kv = c.kv_dim(), hidden = c.hidden_dim;
  if (static_cast<int64_t>(w.layers.size()) != c.n_layers) {
    throw Error(source + ": " + std::to_string(w.layers.size()) + " layers of tensors, the config" +
                " says " + std::to_string(c.n_layers));
  }
  expect_shape(w.token_embedding, {c.vocab_size, dim}, "token embedding", source);
  for (const LayerWeights& l : w.layers) {
    expect_shape(l.attention_norm, {dim}, "attention norm", source);
    expect_shape(l.wq, {q, dim}, "wq", source);
    expect_shape(l.wk, {kv, dim}, "wk", source);
    expect_shape(l.wv, {kv, dim}, "wv", source);
    expect_shape(l.wo, {dim, q}, "wo", source);
    expect_shape(l.ffn_norm, {dim}, "ffn norm", source);
    expect_shape(l.w1, {hidden, dim}, "w1 (gate)", source);
    expect_shape(l.w2, {dim, hidden}, "w2 (down)", source);
    expect_shape(l.w3, {hidden, dim}, "w3 (up)", source);
    expect_float(l.attention_norm, source);
    expect_float(l.ffn_norm, source);
  }
  expect_shape(w.final_norm, {dim}, "final norm", source);
  expect_float(w.final_norm, source);
  expect_shape(w.classifier, {c.vocab_size, dim}, "classifier", source);
  if (c.shared_classifier != w.tied()) {
    throw Error(source + ": the config says the embeddings are " +
                (c.shared_classifier ? "tied" : "not tied") + ", the classifier tensor " +
                w.classifier.name + (w.tied() ? " is" : " is not") + " the token embedding");
  }
}

void require_dtypes(const ModelWeights& weights, const std::string& backend, DTypeSet supported) {
  weights.for_each([&](const Tensor& t) {
    if (!supported.contains(t.dtype)) {
      throw Error(backend + ": tensor " + t.name + " is " + to_string(t.dtype) + ", which " +
                  backend + " does not run (it runs " + supported.to_string() + ")");
    }
  });
}

}  // namespace llama
