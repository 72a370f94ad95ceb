// Weights: flat <-> per-layer layout conversion.
#include <catch2/catch.hpp>

#include "llama/formats/llama2c_checkpoint.hpp"
#include "test_support.hpp"

using namespace llama;

TEST_CASE("per-layer views slice the flat tensors without copying", "[weights]") {
  const Checkpoint ck = Checkpoint::open(test::model_path("rand-gqa.bin"));
  const Config& c = ck.config();
  const TransformerWeights& flat = ck.model().legacy_weights;
  const TransformerWeights per = to_per_layer(flat, c);
  REQUIRE(per.layout == WeightLayout::per_layer);
  REQUIRE(per.layers.size() == static_cast<size_t>(c.n_layers));
  for (int64_t l = 0; l < c.n_layers; ++l) {
    const auto& layer = per.layers[static_cast<size_t>(l)];
    CHECK(layer.wq.data() == flat.flat.wq.data() + l * c.dim * c.dim);
    CHECK(layer.wk.size() == static_cast<size_t>(c.kv_dim() * c.dim));
    CHECK(layer.w2.data() == flat.flat.w2.data() + l * c.dim * c.hidden_dim);
    CHECK(layer.rms_ffn.data() == flat.layer(c, l).rms_ffn.data());
  }
  // Back to flat: contiguous layers give the original views, no copy.
  const TransformerWeights round = to_flat(per, c);
  CHECK(round.flat.wq.data() == flat.flat.wq.data());
  CHECK(round.flat.w3.size() == flat.flat.w3.size());
}

TEST_CASE("flattening scattered layers copies them in order", "[weights]") {
  const Checkpoint ck = Checkpoint::open(test::model_path("rand-gqa.bin"));
  const Config& c = ck.config();
  TransformerWeights per = to_per_layer(ck.model().legacy_weights, c);
  std::reverse(per.layers.begin(), per.layers.end());  // no longer contiguous
  const TransformerWeights flat = to_flat(per, c);
  REQUIRE(flat.flat.wq.data() != ck.model().legacy_weights.flat.wq.data());
  for (int64_t l = 0; l < c.n_layers; ++l) {
    const auto got = flat.layer(c, l).wq;
    const auto want = per.layers[static_cast<size_t>(l)].wq;
    REQUIRE(got.size() == want.size());
    CHECK(std::equal(got.begin(), got.end(), want.begin()));
  }
  // Layout changes the views, never the values.
  const auto w = with_layout(flat, c, WeightLayout::per_layer);
  CHECK(std::equal(w.layers[0].w1.begin(), w.layers[0].w1.end(), per.layers[0].w1.begin()));
}
