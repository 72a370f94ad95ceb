// token_logprob: a normalised log-softmax after temperature, the top-k in
// order, and on every backend the log-softmax of its logits within 1e-5 of the
// reference backend's along a stories1M stream.
#include <catch2/catch.hpp>
#include <cmath>

#include "llama/error.hpp"
#include "llama/formats/llama2c_checkpoint.hpp"
#include "llama/logprobs.hpp"
#include "llama/registry.hpp"
#include "test_support.hpp"

using namespace llama;

TEST_CASE("logprobs: log-softmax after temperature, top-k most likely first", "[logprobs]") {
  const std::vector<float> logits = {1.0f, 3.0f, 2.0f, 3.0f, -1.0f};
  const TokenLogprob greedy = token_logprob(logits, 0.0f, 1, 5);
  double total = 0;
  for (const auto& a : greedy.top) total += std::exp(a.logprob);
  CHECK(total == Approx(1.0).epsilon(1e-12));
  // Ties keep the lower id first.
  REQUIRE(greedy.top.size() == 5);
  CHECK(greedy.top[0].id == 1);
  CHECK(greedy.top[1].id == 3);
  CHECK(greedy.top[2].id == 2);
  CHECK(greedy.top[4].id == 4);
  const double z = std::log(std::exp(1.0) + 2 * std::exp(3.0) + std::exp(2.0) + std::exp(-1.0));
  CHECK(greedy.logprob == Approx(3.0 - z).epsilon(1e-12));
  // Temperature 2 halves the logits first.
  const TokenLogprob warm = token_logprob(logits, 2.0f, 4, 0);
  const double z2 = std::log(std::exp(0.5) + 2 * std::exp(1.5) + std::exp(1.0) + std::exp(-0.5));
  CHECK(warm.logprob == Approx(-0.5 - z2).epsilon(1e-12));
  CHECK(warm.top.empty());
  // Large logits do not overflow.
  const std::vector<float> big = {1000.0f, 999.0f};
  CHECK(token_logprob(big, 1.0f, 1, 0).logprob == Approx(-1.0 - std::log1p(std::exp(-1.0))));
}

TEST_CASE("logprobs: bad arguments are refused", "[logprobs]") {
  const std::vector<float> logits = {0.0f, 1.0f};
  CHECK_THROWS_AS(token_logprob(logits, 0.0f, 2, 0), Error);
  CHECK_THROWS_AS(token_logprob(logits, 0.0f, -1, 0), Error);
  CHECK_THROWS_AS(token_logprob(logits, 0.0f, 0, 21), Error);
  CHECK_THROWS_AS(token_logprob(logits, 0.0f, 0, -1), Error);
  CHECK_THROWS_AS(token_logprob(logits, -1.0f, 0, 0), Error);
  CHECK(token_logprob(logits, 0.0f, 0, 20).top.size() == 2);  // k above the vocabulary: all
}

TEST_CASE("logprobs: every backend's log-softmax within 1e-5 of the reference backend's",
          "[logprobs]") {
  const auto cases = test::load_json(test::reference_path("parity-stories1M.json"));
  const Checkpoint ck = Checkpoint::open(test::model_path("stories1M.bin"));
  const auto stream = cases.at(1).at("stream").get<std::vector<int32_t>>();
  const std::vector<int32_t> tokens(stream.begin(), stream.begin() + 64);
  auto ref = test::make_backend("reference");
  ref->prepare(ck.model());
  const std::vector<float> want = test::sequential_logits(*ref, tokens);
  const auto vocab = static_cast<size_t>(ck.config().vocab_size);
  for (const RegistryEntry& e : BackendRegistry::instance().entries()) {
    if (e.is_wrapper || e.name == "reference") continue;
    INFO(e.name);
    auto backend = test::make_backend(e.name);
    backend->prepare(ck.model());
    const std::vector<float> got = test::sequential_logits(*backend, tokens);
    double worst = 0;
    for (size_t pos = 0; pos + 1 < tokens.size(); ++pos) {
      for (const float temperature : {0.0f, 0.8f}) {
        const auto g = std::span(got).subspan(pos * vocab, vocab);
        const auto w = std::span(want).subspan(pos * vocab, vocab);
        const TokenLogprob a = token_logprob(g, temperature, tokens[pos + 1], 5);
        const TokenLogprob b = token_logprob(w, temperature, tokens[pos + 1], 5);
        worst = std::max(worst, std::abs(a.logprob - b.logprob));
        for (size_t i = 0; i < a.top.size(); ++i) {
          CHECK(a.top[i].id == b.top[i].id);
          worst = std::max(worst, std::abs(a.top[i].logprob - b.top[i].logprob));
        }
      }
    }
    INFO("largest difference " << worst);
    CHECK(worst < 1e-5);
  }
}
