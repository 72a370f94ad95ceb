// The BLAS backend against the reference backend and the parity argmax lists.
#include <catch2/catch.hpp>
#include <cmath>

#include "llama/error.hpp"
#include "llama/formats/llama2c_checkpoint.hpp"
#include "llama/registry.hpp"
#include "test_support.hpp"

using namespace llama;

TEST_CASE("blas logits match the reference backend on every shared model", "[blas]") {
  for (const char* file : {"stories260K.bin", "rand-gqa.bin", "mini32k.bin"}) {
    INFO(file);
    const Checkpoint ck = Checkpoint::open(test::model_path(file));
    auto blas = test::make_backend("blas");
    auto ref = test::make_backend("reference");
    blas->prepare(ck.model());
    ref->prepare(ck.model());
    const int32_t tokens[] = {1, 5, 300, 42, 7, 499, 2, 100};
    for (int64_t pos = 0; pos < 8; ++pos) {
      const auto a = blas->forward(tokens[pos], pos);
      const std::vector<float> got(a.begin(), a.end());
      const auto want = ref->forward(tokens[pos], pos);
      REQUIRE(got.size() == static_cast<size_t>(ck.config().vocab_size));
      CHECK(test::relative_diff(got, want) < 1e-4);
      for (float v : got) REQUIRE(std::isfinite(v));
    }
  }
}

TEST_CASE("blas argmax follows run.c's at every position of the parity cases", "[blas][parity]") {
  for (const auto& c : test::load_json(test::reference_path("parity.json"))) {
    INFO(c["name"].get<std::string>());
    const Checkpoint ck = Checkpoint::open(test::model_path(c["model"].get<std::string>()));
    auto blas = test::make_backend("blas");
    blas->prepare(ck.model());
    const auto stream = c["stream"].get<std::vector<int32_t>>();
    const auto expected = c["argmax"].get<std::vector<int32_t>>();
    for (size_t pos = 0; pos < expected.size(); ++pos) {
      const auto logits = blas->forward(stream[pos], static_cast<int64_t>(pos));
      const auto best = std::max_element(logits.begin(), logits.end()) - logits.begin();
      REQUIRE(best == expected[pos]);
    }
  }
}

TEST_CASE("blas: prepare restarts, batches equal sequential calls, threads agree", "[blas]") {
  const Checkpoint ck = Checkpoint::open(test::model_path("stories260K.bin"));
  const std::vector<int32_t> tokens = {1, 400, 401, 13, 300, 22};
  auto one = test::make_backend("blas", 1);
  one->prepare(ck.model());
  const std::vector<float> sequential = test::sequential_logits(*one, tokens);
  one->prepare(ck.model());  // starts over
  const auto batch = one->forward_batch(tokens, 0, /*all_logits=*/true);
  REQUIRE(batch.size() == sequential.size());
  CHECK(test::relative_diff(batch, sequential) < 1e-5);

  auto two = test::make_backend("blas", 2);
  two->prepare(ck.model());
  const auto last = two->forward_batch(tokens, 0);
  const std::span<const float> seq_last(sequential.data() + sequential.size() - last.size(),
                                        last.size());
  CHECK(test::relative_diff(last, seq_last) < 1e-5);
}

TEST_CASE("blas refuses positions past seq_len and bad tokens", "[blas][bad-input]") {
  const Checkpoint ck = Checkpoint::open(test::model_path("rand-gqa.bin"));
  auto blas = test::make_backend("blas");
  CHECK_THROWS_AS(blas->forward(1, 0), Error);  // before prepare
  blas->prepare(ck.model());
  CHECK_THROWS_WITH(blas->forward(1, ck.config().seq_len), Catch::Matchers::Contains("seq_len"));
  CHECK_THROWS_WITH(blas->forward(-1, 0), Catch::Matchers::Contains("vocabulary"));
  CHECK_THROWS_WITH(blas->forward(512, 0), Catch::Matchers::Contains("vocabulary"));
  CHECK_THROWS_AS(test::make_backend("blas", -1), Error);
  CHECK_FALSE(blas->describe().empty());
}
