// llama-compare: every registered backend agrees on the shared models with
// run.c's settings; a perturbed or derailed backend makes it exit 1 and says
// where; bad usage exits 2 with one line.
#include <catch2/catch.hpp>
#include <sstream>

#include "compare_run.hpp"
#include "llama/registry.hpp"
#include "test_support.hpp"

using namespace llama;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

namespace {

struct Run {
  int exit_code;
  std::string out, err;
};

Run run_compare(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  const int code = compare::run_compare(args, out, err);
  return {code, out.str(), err.str()};
}

// blas first, then every other registered backend.
std::string all_backends() {
  std::string list = "blas";
  for (const std::string& name : BackendRegistry::instance().backend_names()) {
    if (name != "blas") list += "," + name;
  }
  return list;
}

std::vector<std::string> case_args(const nlohmann::json& c) {
  return {"-c",      test::model_path(c["model"]),
          "-k",      test::model_path("tokenizer.bin"),
          "-p",      c["prompt"],
          "-t",      std::to_string(c["temperature"].get<double>()),
          "--top-p", std::to_string(c["top_p"].get<double>()),
          "-r",      std::to_string(c["seed"].get<int64_t>()),
          "-s",      std::to_string(c["steps"].get<int64_t>())};
}

std::vector<std::string> plus(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

}  // namespace

TEST_CASE("llama-compare: every registered backend agrees on the parity cases", "[compare]") {
  const std::string backends = all_backends();
  INFO("backends " << backends);
  for (const auto& c : test::load_json(test::reference_path("parity.json"))) {
    INFO(c["name"].get<std::string>());
    const Run r = run_compare(plus(case_args(c), {"-b", backends, "--format", "json"}));
    INFO(r.out << r.err);
    CHECK(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["ok"] == true);
    CHECK(j["baseline"] == "blas");
    CHECK(j["stream"] == c["stream"]);  // the baseline generated run.c's stream
    CHECK(j["positions"] == c["steps"]);
    REQUIRE(j["backends"].size() == BackendRegistry::instance().backend_names().size() - 1);
    for (const auto& b : j["backends"]) {
      INFO(b["backend"]);
      CHECK(b["first_divergence"].is_null());
      CHECK(b["stream"] == c["stream"]);
      CHECK(b["argmax_mismatches"] == 0);
      CHECK(b["max_rel_diff"].get<double>() <= 1e-4);
      // reference sums in double, blas in float: a difference, measured, not zeros.
      if (b["backend"] == "reference") CHECK(b["max_abs_diff"].get<double>() > 0);
    }
  }
}

TEST_CASE("llama-compare: a backend with noise on one logit fails", "[compare]") {
  const auto c = test::load_json(test::reference_path("parity.json")).at(0);  // greedy s260
  const auto args = case_args(c);
  const Run text = run_compare(plus(args, {"-b", "blas,test-noisy:blas"}));
  CHECK(text.exit_code == 1);
  CHECK_THAT(text.out, Contains("faulty:blas: max abs diff") && Contains("FAIL") &&
                           Contains("some backends differ from blas"));

  const Run json = run_compare(plus(args, {"-b", "blas,test-noisy:blas", "--format", "json"}));
  CHECK(json.exit_code == 1);
  const auto b = nlohmann::json::parse(json.out)["backends"].at(0);
  CHECK(b["max_abs_token"] == 256);  // the perturbed logit: vocab_size / 2
  CHECK(b["max_rel_diff"].get<double>() > 1e-4);
  CHECK(b["ok"] == false);

  // The same noise within a looser tolerance passes.
  CHECK(run_compare(plus(args, {"-b", "blas,test-noisy:blas", "--tolerance", "0.01"})).exit_code ==
        0);
}

TEST_CASE("llama-compare: a derailed backend's divergence is found", "[compare]") {
  const auto c = test::load_json(test::reference_path("parity.json")).at(0);  // greedy s260
  const Run r = run_compare(plus(case_args(c), {"-b", "reference,test-derailed:reference,blas",
                                                "--format", "json", "--tolerance", "1000"}));
  CHECK(r.exit_code == 1);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["backends"].at(0)["first_divergence"] == 11);  // its argmax moved at position 10
  CHECK(j["backends"].at(0)["argmax_mismatches"] == 1);  // fed the baseline's tokens
  CHECK(j["backends"].at(1)["first_divergence"].is_null());
  CHECK(j["backends"].at(1)["ok"] == true);
}

TEST_CASE("llama-compare: bad usage and bad input give one line", "[compare][bad-input]") {
  const std::vector<std::string> ck = {"-c", test::model_path("stories260K.bin"), "-s", "4"};
  const std::vector<std::pair<std::vector<std::string>, std::string>> usage = {
      {ck, "--backend: required"},
      {plus(ck, {"-b", "blas"}), "--backend: needs at least two"},
      {plus(ck, {"-b", "blas,,reference"}), "--backend: empty name"},
      {plus(ck, {"-b", "blas,nope"}), "--backend: unknown backend 'nope'"},
      {plus(ck, {"-b", "blas,reference", "--tolerance", "-1"}), "--tolerance"},
      {plus(ck, {"-b", "blas,reference", "--format", "xml"}), "--format"},
      {plus(ck, {"-b", "blas,reference", "-t", "-2"}), "--temperature"},
      {{"-b", "blas,reference"}, "--checkpoint: required"},
      {plus(ck, {"--bogus"}), "bogus"},
  };
  for (const auto& [args, needle] : usage) {
    const Run r = run_compare(args);
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, StartsWith("llama-compare: ") && Contains(needle));
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
  const Run missing = run_compare({"-c", "/nonexistent.bin", "-b", "blas,reference"});
  CHECK(missing.exit_code == 1);
  CHECK_THAT(missing.err, StartsWith("llama-compare: ") && Contains("/nonexistent.bin"));
  CHECK(std::count(missing.err.begin(), missing.err.end(), '\n') == 1);
  const Run help = run_compare({"--help"});
  CHECK(help.exit_code == 0);
  CHECK_THAT(help.out, Contains("--tolerance"));
}

TEST_CASE("the llama-compare program reports blas and reference identical", "[compare]") {
  const auto r = test::run_program(
      LLAMA_COMPARE_PATH,
      {"-c", test::model_path("rand-gqa.bin"), "-k", test::model_path("tokenizer.bin"), "-b",
       "blas,reference,timing:blas", "-t", "0.9", "-r", "123", "-s", "40"});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out,
             Contains("reference: max abs diff") && Contains("all backends agree with blas"));
  CHECK_THAT(r.err, Contains("timing:blas: forward: "));  // the wrapper's report
  const auto bad = test::run_program(LLAMA_COMPARE_PATH, {"-b", "blas"});
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, StartsWith("llama-compare: "));
}
