// Config: derived sizes and header validation.
#include <catch2/catch.hpp>

#include "llama/config.hpp"
#include "llama/error.hpp"

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
