// llama-cli's generation controls as a user runs them, and every bad value of
// them: one line, non-zero exit.
#include <catch2/catch.hpp>

#include "test_support.hpp"

using namespace llama::test;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

namespace {

std::vector<std::string> stories(std::vector<std::string> extra) {
  std::vector<std::string> args = {"-c", model_path("stories1M.bin"), "-k",
                                   model_path("tok2048.bin")};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

void check_one_line_error(const ProcessResult& r, int code, const std::string& needle) {
  INFO("stderr: " << r.err);
  CHECK(r.exit_code == code);
  CHECK_THAT(r.err, StartsWith("llama-cli: ") && Contains(needle));
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
}

}  // namespace

TEST_CASE("llama-cli: --stop, -n, --ignore-eos, --ctx-size, --logprobs", "[cli][control]") {
  auto r = run_llama_cli(stories({"--stop", "Lily", "--stop", "park", "--format", "json"}));
  REQUIRE(r.exit_code == 0);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["stop_reason"] == "stop");
  CHECK(j["stop_text"] == "Lily");
  CHECK(j["text"] == "Once upon a time, there was a little girl named ");
  // Text mode prints the same, nothing of the stop string.
  r = run_llama_cli(stories({"--stop", "Lily"}));
  CHECK(r.out == "Once upon a time, there was a little girl named \n");

  r = run_llama_cli(stories({"-n", "5", "--format", "json"}));
  j = nlohmann::json::parse(r.out);
  CHECK(j["generated_tokens"].size() == 5);
  CHECK(j["stop_reason"] == "max_tokens");

  r = run_llama_cli(stories({"--ignore-eos", "--format", "json"}));
  j = nlohmann::json::parse(r.out);
  CHECK(j["generated_tokens"].size() == 256);
  CHECK(j["stop_reason"] == "steps");

  r = run_llama_cli(stories({"--ctx-size", "20", "--format", "json", "-b", "graph"}));
  j = nlohmann::json::parse(r.out);
  CHECK(j["generated_tokens"].size() == 20);

  r = run_llama_cli(stories({"-n", "3", "--logprobs", "2", "--format", "json"}));
  REQUIRE(r.exit_code == 0);
  j = nlohmann::json::parse(r.out);
  REQUIRE(j["logprobs"].size() == 3);
  for (const auto& lp : j["logprobs"]) {
    CHECK(lp["logprob"].get<double>() <= 0);
    CHECK(lp["top"].size() == 2);
    CHECK(lp["top"][0]["id"] == lp["id"]);  // greedy
    CHECK(lp.contains("piece"));
  }
}

TEST_CASE("llama-cli: a prompt longer than the context is refused, or cut and said so",
          "[cli][control]") {
  std::string words;
  for (int i = 0; i < 400; ++i) words += "the dog ran. ";
  auto r = run_llama_cli(stories({"-p", words}));
  check_one_line_error(r, 1, "tokens, longer than the context of 256 positions");
  // It names the flag and the checkpoint whose context it is.
  CHECK_THAT(r.err, Contains("llama-cli: -p: the prompt is ") && Contains("stories") &&
                        Contains("--truncate-prompt left|right keeps what fits)"));
  r = run_llama_cli(
      stories({"-p", words, "--truncate-prompt", "right", "-n", "4", "--format", "json"}));
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(
      r.err,
      Contains(
          "longer than the context of 256 positions: kept the last 252 (--truncate-prompt right)"));
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["prompt_tokens"].size() == 252);
  CHECK(j["generated_tokens"].size() == 4);
  CHECK(j["prompt_tokens_dropped"].get<int64_t>() > 0);
  r = run_llama_cli(
      stories({"-p", words, "--ctx-size", "64", "--truncate-prompt", "left", "--format", "json"}));
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.err, Contains("context of 64 positions: kept the first 32"));
}

TEST_CASE("llama-cli: bad generation controls", "[cli][control]") {
  check_one_line_error(run_llama_cli(stories({"--logprobs", "21", "--format", "json"})), 2,
                       "--logprobs: must be in [0, 20], got 21");
  check_one_line_error(run_llama_cli(stories({"--logprobs", "-1", "--format", "json"})), 2,
                       "--logprobs: must be in [0, 20], got -1");
  check_one_line_error(run_llama_cli(stories({"--logprobs", "3"})), 2,
                       "--logprobs: needs --format json");
  check_one_line_error(run_llama_cli(stories({"--stop", ""})), 2, "--stop: must not be empty");
  check_one_line_error(run_llama_cli(stories({"-n", "0"})), 2,
                       "--max-tokens: must be at least 1, got 0");
  check_one_line_error(run_llama_cli(stories({"--ctx-size", "0"})), 2,
                       "--ctx-size: must be at least 1, got 0");
  check_one_line_error(run_llama_cli(stories({"--ctx-size", "1000"})), 1,
                       "--ctx-size: 1000 is larger than the model's context (seq_len 256)");
  check_one_line_error(run_llama_cli(stories({"--truncate-prompt", "middle"})), 2,
                       "--truncate-prompt: must be left or right, got 'middle'");
  check_one_line_error(run_llama_cli(stories({"-m", "chat", "--stop", "x"})), 2,
                       "--stop: only applies to --mode generate");
}
