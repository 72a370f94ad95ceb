// llama-cli as a user runs it: reference streams through --format json, and
// one-line errors with the right exit codes for bad input.
#include <catch2/catch.hpp>

#include "test_support.hpp"

using namespace llama::test;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

namespace {

int count_lines(const std::string& s) {
  return static_cast<int>(std::count(s.begin(), s.end(), '\n'));
}

void check_one_line_error(const ProcessResult& r, int code, const std::string& needle) {
  INFO("stderr: " << r.err);
  CHECK(r.exit_code == code);
  CHECK_THAT(r.err, StartsWith("llama-cli: ") && Contains(needle));
  CHECK(count_lines(r.err) == 1);
}

}  // namespace

TEST_CASE("llama-cli --format json reproduces every parity case", "[cli][parity]") {
  for (const auto& c : load_json(reference_path("parity.json"))) {
    INFO(c["name"].get<std::string>());
    const auto r = run_llama_cli_case(c, {});
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(json_stream(j) == c["stream"].get<std::vector<int32_t>>());
    CHECK(j["stop_reason"] == (c["stopped_at_bos"].get<bool>() ? "bos" : "steps"));
    CHECK(j["backend"] == "blas");
    for (const char* key : {"text", "load_ms", "prompt_tok_per_s", "decode_tok_per_s"}) {
      CHECK(j.contains(key));
    }
  }
}

TEST_CASE("llama-cli text mode, tokenize, version and listing", "[cli]") {
  const auto r = run_llama_cli({"-c", model_path("mini32k.bin"), "-k", model_path("tokenizer.bin"),
                                "-p", "Once upon a time", "-s", "12"});
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, StartsWith("Once upon a time"));
  CHECK_THAT(r.err, Contains("achieved tok/s:"));

  const auto t = run_llama_cli({"-c", model_path("mini32k.bin"), "-k", model_path("tokenizer.bin"),
                                "-p", "hello world", "--tokenize", "--format", "json"});
  REQUIRE(t.exit_code == 0);
  const auto j = nlohmann::json::parse(t.out);
  CHECK(j["prompt_tokens"] == std::vector<int32_t>{1, 22172, 3186});
  CHECK(j["pieces"].size() == 3);

  const auto v = run_llama_cli({"--version"});
  CHECK(v.exit_code == 0);
  CHECK_THAT(v.out, Contains("OpenBLAS") && Contains("core type"));
  const auto l = run_llama_cli({"--list-backends"});
  CHECK_THAT(l.out, Contains("blas") && Contains("reference"));
  const auto h = run_llama_cli({"--help"});
  CHECK_THAT(h.out, Contains("--checkpoint") && Contains("--top-p"));
  const auto e = run_llama_cli(
      {"-c", model_path("rand-gqa.bin"), "-k", model_path("tokenizer.bin"), "--explain"});
  CHECK(e.exit_code == 0);
  CHECK_THAT(e.out, Contains("KV cache"));
}

TEST_CASE("llama-cli --verify-checkpoint reports every tensor", "[cli]") {
  const auto r = run_llama_cli({"-c", model_path("rand-gqa.bin"), "--verify-checkpoint"});
  CHECK(r.exit_code == 0);
  for (const char* name : {"token_embedding", "wq", "w3", "rms_final", "wcls"})
    CHECK_THAT(r.out, Contains(name));
  // A NaN in a weight makes it fail.
  auto bytes = read_file(model_path("rand-gqa.bin"));
  const float nan = std::nanf("");
  std::memcpy(bytes.data() + 28 + 4 * 10, &nan, 4);
  const std::string p = temp_path("nan.bin");
  write_file(p, bytes);
  const auto bad = run_llama_cli({"-c", p, "--verify-checkpoint"});
  CHECK(bad.exit_code == 1);
  CHECK_THAT(bad.out, Contains("NOT FINITE"));
}

TEST_CASE("llama-cli gives one-line errors for bad flags", "[cli][bad-input]") {
  const std::string ck = model_path("stories260K.bin"), tok = model_path("tokenizer.bin");
  check_one_line_error(run_llama_cli({}), 2, "--checkpoint");
  check_one_line_error(run_llama_cli({"-c", ck, "-k", tok, "-t", "-1"}), 2, "temperature");
  check_one_line_error(run_llama_cli({"-c", ck, "-k", tok, "-t", "abc"}), 2, "temperature");
  check_one_line_error(run_llama_cli({"-c", ck, "-k", tok, "--top-p", "1.5"}), 2, "--top-p");
  check_one_line_error(run_llama_cli({"-c", ck, "-k", tok, "--top-p=-0.1"}), 2, "--top-p");
  check_one_line_error(run_llama_cli({"-c", ck, "-k", tok, "-s", "-5"}), 2, "--steps");
  check_one_line_error(run_llama_cli({"-c", ck, "-k", tok, "-j", "0"}), 2, "--threads");
  check_one_line_error(run_llama_cli({"-c", ck, "-k", tok, "-r", "-3"}), 2, "--seed");
  check_one_line_error(run_llama_cli({"-c", ck, "-k", tok, "--format", "xml"}), 2, "--format");
  check_one_line_error(run_llama_cli({"-c", ck, "--bogus"}), 2, "bogus");
  check_one_line_error(run_llama_cli({"-c", ck, "-k", tok, "-b", "nope"}), 1,
                       "unknown backend 'nope'");
}

TEST_CASE("llama-cli gives one-line errors for bad files", "[cli][bad-input]") {
  const std::string tok = model_path("tokenizer.bin");
  check_one_line_error(run_llama_cli({"-c", temp_path("missing.bin"), "-k", tok}), 1,
                       "missing.bin");
  check_one_line_error(
      run_llama_cli({"-c", model_path("stories260K.bin"), "-k", temp_path("missing-tok.bin")}), 1,
      "missing-tok.bin");

  const auto good = read_file(model_path("rand-gqa.bin"));
  const std::string p = temp_path("cli-bad.bin");
  auto truncated = good;
  truncated.resize(good.size() / 2);
  write_file(p, truncated);
  check_one_line_error(run_llama_cli({"-c", p, "-k", tok}), 1, "truncated");

  for (int field = 0; field < 7; ++field) {
    for (int32_t value : {0, -7, 2147483647}) {
      if (field == 5 && value == -7) continue;  // negative vocab is valid (separate classifier)
      auto bytes = good;
      std::memcpy(bytes.data() + 4 * field, &value, 4);
      write_file(p, bytes);
      INFO("field " << field << " = " << value);
      const auto r = run_llama_cli({"-c", p, "-k", tok, "-s", "4"});
      CHECK(r.exit_code == 1);
      CHECK_THAT(r.err, StartsWith("llama-cli: ") && Contains("cli-bad.bin"));
      CHECK(count_lines(r.err) == 1);
    }
  }

  // A tokenizer cut short.
  auto tok_bytes = read_file(tok);
  tok_bytes.resize(1000);
  const std::string tp = temp_path("cli-bad-tok.bin");
  write_file(tp, tok_bytes);
  check_one_line_error(run_llama_cli({"-c", model_path("mini32k.bin"), "-k", tp}), 1,
                       "cli-bad-tok.bin");
  // A prompt the 512-token vocabulary cannot hold still works through byte fallback.
  const auto r =
      run_llama_cli({"-c", model_path("stories260K.bin"), "-k", tok, "-p", "hi", "-s", "8"});
  CHECK(r.exit_code == 0);
}
