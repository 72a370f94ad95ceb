// Config: derived sizes and header validation.
#include <catch2/catch.hpp>

#include "llama/config.hpp"
#include "llama/error.hpp"

#include <cmath>
#include <vector>

using llama::Config;

namespace {
Config make(int32_t dim, int32_t hidden, int32_t layers, int32_t heads, int32_t kv, int32_t vocab,
            int32_t seq) {
  const int32_t h[7] = {dim, hidden, layers, heads, kv, vocab, seq};
  return Config::from_header(h);
}
}  // namespace

TEST_CASE("config derives head size, kv dim and classifier sharing", "[config]") {
  const Config c = make(64, 172, 5, 8, 4, 512, 512);
  CHECK(c.head_size() == 8);
  CHECK(c.kv_dim() == 32);
  CHECK(c.kv_mul() == 2);
  CHECK(c.shared_classifier);
  CHECK(c.kv_cache_floats() == 2 * 5 * 512 * 32);
  CHECK_NOTHROW(c.validate("m"));

  const Config sep = make(48, 128, 3, 6, 2, -512, 256);
  CHECK_FALSE(sep.shared_classifier);
  CHECK(sep.vocab_size == 512);
  CHECK(sep.parameter_count() == make(48, 128, 3, 6, 2, 512, 256).parameter_count() + 512 * 48);
}

TEST_CASE("config refuses inconsistent or absurd headers", "[config]") {
  using Catch::Matchers::Contains;
  CHECK_THROWS_WITH(make(0, 1, 1, 1, 1, 1, 1).validate("m.bin"),
                    Contains("m.bin") && Contains("dim is 0"));
  CHECK_THROWS_WITH(make(8, -3, 1, 1, 1, 1, 1).validate("m"), Contains("hidden_dim is -3"));
  CHECK_THROWS_WITH(make(8, 8, 0, 1, 1, 1, 1).validate("m"), Contains("n_layers"));
  CHECK_THROWS_WITH(make(8, 8, 1, 3, 1, 1, 1).validate("m"), Contains("not divisible by n_heads"));
  CHECK_THROWS_WITH(make(8, 8, 1, 4, 3, 1, 1).validate("m"), Contains("multiple of n_kv_heads"));
  CHECK_THROWS_WITH(make(8, 8, 1, 4, 8, 1, 1).validate("m"), Contains("multiple of n_kv_heads"));
  CHECK_THROWS_WITH(make(12, 8, 1, 4, 4, 1, 1).validate("m"), Contains("odd"));
  CHECK_THROWS_WITH(make(8, 8, 1, 1, 1, 1, 0).validate("m"), Contains("seq_len is 0"));
  // Every field at INT32_MAX: sizes overflow 64-bit arithmetic.
  const int32_t big = 2147483646;
  CHECK_THROWS_WITH(make(big, big, big, 1, 1, big, big).validate("m"), Contains("overflow"));
}

TEST_CASE("llama2.c headers imply head_dim, eps, theta, layout and the token ids", "[config]") {
  const Config c = make(64, 172, 5, 8, 4, 512, 512);
  CHECK(c.head_dim == 8);
  CHECK(c.q_dim() == 64);
  CHECK(c.norm_eps == 1e-5);
  CHECK(c.rope_theta == 10000.0);
  CHECK(c.rope_scaling.type == llama::RopeScalingType::none);
  CHECK(c.rope_layout == llama::RopeLayout::interleaved);
  CHECK(c.context_length == 512);
  CHECK(c.bos_id == 1);
  CHECK(c.eos_ids == std::vector<int32_t>{2});
  // A vocabulary without those ids has none.
  const Config tiny = make(8, 8, 1, 1, 1, 2, 4);
  CHECK(tiny.bos_id == 1);
  CHECK(tiny.eos_ids.empty());
  CHECK_NOTHROW(tiny.validate("tiny"));
  // to_string names nothing llama2.c files cannot vary.
  CHECK(c.to_string() ==
        "dim=64 hidden_dim=172 n_layers=5 n_heads=8 n_kv_heads=4 vocab_size=512 seq_len=512 "
        "classifier=shared");
}

TEST_CASE("head_dim is independent of dim / n_heads and sizes everything", "[config]") {
  // rand-llama3's shape: dim 96, 4 heads of 32 (queries 128 wide), 1 kv head.
  Config c = make(96, 256, 2, 4, 1, 1000, 64);
  c.head_dim = 32;
  REQUIRE_NOTHROW(c.validate("m"));
  CHECK(c.q_dim() == 128);
  CHECK(c.kv_dim() == 32);
  CHECK(c.kv_cache_floats() == 2 * 2 * 64 * 32);
  // Per layer: norms 2 x 96, wq and wo 2 x 128 x 96, wk and wv 2 x 32 x 96, ffn 3 x 96 x 256.
  const int64_t per_layer = 2 * 96 + 2 * 128 * 96 + 2 * 32 * 96 + 3 * 96 * 256;
  CHECK(c.parameter_count() == 2 * per_layer + 1000 * 96 + 96);
  CHECK_THAT(c.to_string(), Catch::Matchers::Contains("head_dim=32"));
  // dim need not be a multiple of n_heads once head_dim is given.
  Config odd = make(90, 256, 1, 4, 2, 100, 8);
  odd.head_dim = 16;
  CHECK_NOTHROW(odd.validate("m"));
  odd.head_dim = 15;
  CHECK_THROWS_WITH(odd.validate("m"), Catch::Matchers::Contains("odd"));
  odd.head_dim = int64_t{1} << 62;
  CHECK_THROWS_WITH(odd.validate("m"), Catch::Matchers::Contains("overflow"));
}

TEST_CASE("config refuses rope, norm and token settings out of range", "[config]") {
  using Catch::Matchers::Contains;
  const Config good = make(64, 128, 2, 4, 4, 100, 32);
  auto refused = [&](auto mutate, const char* why) {
    Config c = good;
    mutate(c);
    CHECK_THROWS_WITH(c.validate("m.json"), Contains("m.json") && Contains(why));
  };
  refused([](Config& c) { c.rope_theta = 0; }, "rope_theta is 0");
  refused([](Config& c) { c.rope_theta = std::nan(""); }, "rope_theta");
  refused([](Config& c) { c.norm_eps = -1e-6; }, "norm_eps");
  refused([](Config& c) { c.norm_eps = INFINITY; }, "norm_eps");
  refused([](Config& c) { c.context_length = 0; }, "context_length is 0");
  refused(
      [](Config& c) {
        c.rope_scaling.type = llama::RopeScalingType::linear;
        c.rope_scaling.factor = 0;
      },
      "factor");
  refused(
      [](Config& c) {
        c.rope_scaling = {llama::RopeScalingType::llama3, 8.0, 4.0, 4.0, 8192};
      },
      "greater than low_freq_factor");
  refused(
      [](Config& c) {
        c.rope_scaling = {llama::RopeScalingType::llama3, 8.0, 1.0, 4.0, 0};
      },
      "original_max_position_embeddings is 0");
  refused([](Config& c) { c.bos_id = 100; }, "bos id 100");
  refused([](Config& c) { c.eos_ids = {2, -3}; }, "eos id -3");
  Config none = good;
  none.bos_id = -1;  // a model without BOS
  none.eos_ids = {99, 0};
  CHECK_NOTHROW(none.validate("m"));
  CHECK_THAT(none.to_string(), Contains("bos=-1") && Contains("eos=99,0"));
}
