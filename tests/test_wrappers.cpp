// The example wrappers (apps/examples): created through the registry around
// any backend, transparent to the logits, and reporting what they saw; and
// reachable from llama-cli as -b counting:NAME / timing:NAME.
#include <catch2/catch.hpp>

#include "llama/error.hpp"
#include "llama/formats/llama2c_checkpoint.hpp"
#include "llama/generate.hpp"
#include "llama/registry.hpp"
#include "llama/tokenizers/llama2c_tokenizer.hpp"
#include "test_support.hpp"

using namespace llama;
using Catch::Matchers::Contains;

namespace {

// Generates 10 positions from the prompt "hello world" (3 tokens with BOS):
// one forward_batch of 3 positions, then 7 forward calls.
GenerationResult generate_10(InferenceBackend& backend, const Checkpoint& ck) {
  const Llama2cTokenizer tok(test::model_path("tokenizer.bin"), ck.config().vocab_size);
  Sampler sampler(ck.config().vocab_size, 0.0f, 0.9f, 1);
  GenerationOptions g;
  g.prompt = "hello world";
  g.steps = 10;
  return generate(backend, ck.config(), tok, sampler, g);
}

}  // namespace

TEST_CASE("the counting wrapper counts calls and positions", "[wrappers]") {
  const Checkpoint ck = Checkpoint::open(test::model_path("mini32k.bin"));
  auto counting = BackendRegistry::instance().create("counting:reference");
  CHECK(counting->name() == "counting:reference");
  CHECK(counting->report() ==
        "counting:reference: prepare 0, forward_batch 0, forward 0, positions 0\n");
  counting->prepare(ck.model());
  const auto wrapped = generate_10(*counting, ck);

  auto plain = BackendRegistry::instance().create("reference");
  plain->prepare(ck.model());
  CHECK(generate_10(*plain, ck).generated_tokens == wrapped.generated_tokens);
  // The reference claims batch invariance, so generate() runs forward_runs: the
  // prompt's 3 tokens in one call, then one call a generated token.
  CHECK(
      counting->report() ==
      "counting:reference: prepare 1, forward_batch 0, forward 0, forward_runs 8, positions 10\n");
  CHECK(counting->describe() == plain->describe());

  // Under fast numerics blas claims nothing: forward_batch for the prompt, forward after.
  BackendOptions fast;
  fast.numerics = Numerics::fast;
  auto counting_fast = BackendRegistry::instance().create("counting:blas", fast);
  counting_fast->prepare(ck.model());
  REQUIRE_FALSE(counting_fast->batch_invariant());
  generate_10(*counting_fast, ck);
  CHECK(counting_fast->report() ==
        "counting:blas: prepare 1, forward_batch 1, forward 7, positions 10\n");
}

TEST_CASE("the timing wrapper reports p50 and p99 per phase", "[wrappers]") {
  const Checkpoint ck = Checkpoint::open(test::model_path("mini32k.bin"));
  auto timing = BackendRegistry::instance().create("timing:blas");
  CHECK(timing->name() == "timing:blas");
  CHECK(timing->report().empty());  // no calls yet
  timing->prepare(ck.model());
  generate_10(*timing, ck);
  const std::string report = timing->report();
  CHECK_THAT(report, Contains("timing:blas: prepare: 1 calls, p50 ") &&
                         Contains("timing:blas: forward_runs: 8 calls, p50 ") &&
                         Contains(" ms, p99 "));
  // p50 <= p99 in every line.
  std::istringstream lines(report);
  for (std::string line; std::getline(lines, line);) {
    double p50 = -1, p99 = -1;
    REQUIRE(std::sscanf(line.c_str() + line.find("p50"), "p50 %lf ms, p99 %lf ms", &p50, &p99) ==
            2);
    CHECK(p50 >= 0);
    CHECK(p50 <= p99);
  }
}

TEST_CASE("wrappers nest and pass errors through", "[wrappers]") {
  const Checkpoint ck = Checkpoint::open(test::model_path("rand-gqa.bin"));
  auto both = BackendRegistry::instance().create("counting:timing:reference");
  CHECK(both->name() == "counting:timing:reference");
  both->prepare(ck.model());
  both->forward(1, 0);
  CHECK_THROWS_AS(both->forward(1, ck.config().seq_len), Error);
  const std::string report = both->report();
  CHECK_THAT(report, Contains("counting:timing:reference: prepare 1, forward_batch 0, forward 2") &&
                         Contains("timing:reference: forward: 1 calls"));
  CHECK_THROWS_WITH(BackendRegistry::instance().create("counting:nope"),
                    Contains("unknown backend 'nope'"));
}

TEST_CASE("llama-cli runs the wrappers by name and prints their reports", "[wrappers][cli]") {
  const std::vector<std::string> base = {"-c", test::model_path("mini32k.bin"),
                                         "-k", test::model_path("tokenizer.bin"),
                                         "-p", "hello world",
                                         "-s", "10"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return test::run_llama_cli(args);
  };
  const auto plain = with({"-b", "blas", "--format", "json"});
  REQUIRE(plain.exit_code == 0);

  const auto counting = with({"-b", "counting:blas", "--format", "json"});
  REQUIRE(counting.exit_code == 0);
  const auto j = nlohmann::json::parse(counting.out);  // the report keeps stdout clean
  CHECK(j["backend"] == "counting:blas");
  CHECK(j["generated_tokens"] == nlohmann::json::parse(plain.out)["generated_tokens"]);
  CHECK(counting.err ==
        "counting:blas: prepare 1, forward_batch 0, forward 0, forward_runs 8, positions 10\n");

  const auto timing = with({"-b", "timing:blas"});
  REQUIRE(timing.exit_code == 0);
  CHECK_THAT(timing.err,
             Contains("achieved tok/s") && Contains("timing:blas: forward_runs: 8 calls"));

  const auto listed = test::run_llama_cli({"--list-backends"});
  CHECK_THAT(listed.out, Contains("wrapper counting") && Contains("wrapper timing"));
  const auto unknown = with({"-b", "timing:nope"});
  CHECK(unknown.exit_code == 1);
  CHECK_THAT(unknown.err, Contains("llama-cli: unknown backend 'nope'"));
}
