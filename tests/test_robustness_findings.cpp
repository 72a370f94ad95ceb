// Regressions for what fuzzing found (fuzz/): each input is the one libFuzzer
// saved, fed to the same entry point, with the behaviour now expected.
#include <catch2/catch.hpp>
#include <sstream>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "cli_options.hpp"
#include "cli_run.hpp"
#include "command_line.hpp"
#include "llama/error.hpp"
#include "llama/tokenizers/llama2c_tokenizer.hpp"
#include "test_support.hpp"

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

namespace {

std::vector<std::byte> from_hex(const std::string& hex) {
  std::vector<std::byte> out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<std::byte>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  }
  return out;
}

// fuzz_cli_args input: arguments separated by NUL bytes.
std::vector<std::string> args_from_hex(const std::string& hex) {
  std::vector<std::string> args(1);
  for (std::byte b : from_hex(hex)) {
    if (b == std::byte{0}) {
      args.emplace_back();
    } else {
      args.back().push_back(static_cast<char>(b));
    }
  }
  return args;
}

struct CliRun {
  int code = -1;
  std::string out, err;
};
CliRun run_cli(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  CliRun r;
  r.code = llama::cli::run_cli(args, out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

}  // namespace

TEST_CASE("finding: encode with BOS/EOS in a vocabulary of fewer than 3 entries",
          "[robustness][fuzz-finding][tokenizer]") {
  // fuzz_tokenizer_file: vocab_size 1 (the two-byte prefix), then a tokenizer.bin
  // with one entry. encode pushed BOS (id 1) and EOS (id 2), outside the
  // vocabulary, and the merge search read vocab_[1] past the end of the vector.
  const auto input =
      from_hex("0100070000005b000000010000000000050005000a3c730000ffff26100000000000000000000000");
  const int64_t vocab_size = std::to_integer<int>(input[0]) | std::to_integer<int>(input[1]) << 8;
  REQUIRE(vocab_size == 1);
  const std::vector<std::byte> file(input.begin() + 2, input.end());
  const llama::Llama2cTokenizer tok = llama::Llama2cTokenizer::parse(file, "found.bin", vocab_size);
  CHECK_THROWS_WITH(tok.encode("", true, true),
                    StartsWith("found.bin: cannot encode with BOS (id 1)"));
  CHECK_THROWS_WITH(tok.encode("x", false, true), Contains("cannot encode with EOS (id 2)"));
  CHECK(tok.encode("", false, false).empty());

  // Two entries: BOS exists, EOS does not.
  std::vector<std::byte> two;
  llama::test::append(two, int32_t{4});
  for (const char* s : {"<u>", "<s>"}) {
    llama::test::append(two, 0.0f);
    llama::test::append(two, int32_t{3});
    for (const char* c = s; *c; ++c) two.push_back(static_cast<std::byte>(*c));
  }
  const llama::Llama2cTokenizer tok2 = llama::Llama2cTokenizer::parse(two, "two.bin", 2);
  CHECK(tok2.encode("", true, false) == std::vector<int32_t>{1});
  CHECK_THROWS_WITH(tok2.encode("", true, true), Contains("EOS"));
}

TEST_CASE("finding: a usage error quoting a newline stays one line",
          "[robustness][fuzz-finding][cli]") {
  // fuzz_cli_args: the flag "-\xFF\nc"; Boost quotes it and the message broke in two.
  const auto args = args_from_hex("2dff0a63002e6d726e696f70636d7074");
  REQUIRE(args.front() == "-\xFF\nc");
  const CliRun r = run_cli(args);
  CHECK(r.code == 2);
  CHECK_THAT(r.err, StartsWith("llama-cli: ") && Contains("\\x0A"));
  CHECK(r.err.find('\n') == r.err.size() - 1);
}

TEST_CASE("finding: a value containing %value% does not hang the parser",
          "[robustness][fuzz-finding][cli]") {
  // fuzz_cli_args timed out: Boost 1.74 replaces %value% in its message with
  // the value itself, in a loop that never ends when the value holds "%value%".
  const auto args = args_from_hex(
      "2d63006d2e3905050505050505050505050505390505050505050505050505050505050505053035002d7400"
      "31652576616c756525272920666f72206f70333039");
  REQUIRE(args.size() == 4);
  CHECK_THROWS_WITH(llama::cli::parse_cli(args), Contains("temperature"));
  for (const std::vector<std::string>& a :
       {std::vector<std::string>{"-c", "m.bin", "-t", "%value%"},
        std::vector<std::string>{"-c", "m.bin", "--%canonical_option%"},
        std::vector<std::string>{"-c", "m.bin", "-s", "%option%%prefix%"}}) {
    const CliRun r = run_cli(a);
    CHECK(r.code == 2);
    CHECK_THAT(r.err, StartsWith("llama-cli: ") && Contains("'%'"));
  }
  // Without a '%' anywhere, Boost's own message (which quotes the value) is kept.
  CHECK_THROWS_WITH(llama::cli::parse_cli({"-c", "m.bin", "-t", "abc"}), Contains("'abc'"));
}

TEST_CASE("finding: every app parses its flags through parse_command_line, %value% included",
          "[robustness][fuzz-finding][cli]") {
  // llama-tokenizer-bench had its own copy of the parse block, with e.what() as the
  // message: `--seconds %value%` hung it. The apps now share cli::parse_command_line.
  namespace po = boost::program_options;
  double seconds = 0;
  std::string input;
  po::options_description desc("Options");
  desc.add_options()("seconds", po::value(&seconds), "seconds")("input", po::value(&input), "in");
  CHECK_THROWS_AS(llama::cli::parse_command_line(desc, {"--seconds", "%value%"}),
                  llama::cli::UsageError);
  CHECK_THROWS_WITH(llama::cli::parse_command_line(desc, {"--seconds", "%value%"}),
                    Contains("'%'"));
  CHECK_THROWS_WITH(llama::cli::parse_command_line(desc, {"--nope"}), Contains("nope"));
  po::positional_options_description positional;
  positional.add("input", 1);
  const po::variables_map vm =
      llama::cli::parse_command_line(desc, {"in.bin", "--seconds", "2.5"}, &positional);
  CHECK(vm.count("input") == 1);
  CHECK(input == "in.bin");
  CHECK(seconds == 2.5);
  CHECK_THAT(llama::cli::help_text(desc), Contains("--seconds"));
}

TEST_CASE("finding: a temperature beyond float range is refused",
          "[robustness][fuzz-finding][cli]") {
  // fuzz_cli_args: "-t 1e154" is finite as a double and became inf as a float.
  const auto args = args_from_hex(
      "2d63006d2e6269303b006e2d0073873035006d2effffffffffffff3687303735303134323735343237393135"
      "343935353531363136002d74003165313534");
  REQUIRE(args.back() == "1e154");
  CHECK_THROWS_WITH(llama::cli::parse_cli(args), StartsWith("--temperature"));
  CHECK_THROWS_WITH(llama::cli::parse_cli({"-c", "m.bin", "-t", "3.5e38"}),
                    StartsWith("--temperature"));
  CHECK(llama::cli::parse_cli({"-c", "m.bin", "-t", "3.0e38"}).temperature == 3.0e38f);
}

TEST_CASE("finding: an empty --tokenizer is refused, with or without a checkpoint",
          "[robustness][fuzz-finding][cli]") {
  // fuzz_cli_args: "--tokenize -k ''" was accepted with neither a tokenizer nor a checkpoint.
  const auto args = args_from_hex(
      "00000000002d2d746f6b656e697a6500b42d76630062696e002d6b00006572696679742e6f002efe"
      "fffff16e002d70004f6e6f696e");
  REQUIRE(args.size() > 8);
  CHECK_THROWS_WITH(llama::cli::parse_cli(args), StartsWith("--tokenizer"));
  CHECK_THROWS_WITH(llama::cli::parse_cli({"-c", "m.bin", "-k", ""}), StartsWith("--tokenizer"));
  CHECK(llama::cli::parse_cli({"--tokenize", "-k", "tok.bin", "-p", "x"}).checkpoint.empty());
}

TEST_CASE("finding: -c naming a directory that holds no checkpoint is one line and exit 1",
          "[robustness][fuzz-finding][cli]") {
  // fuzz_cli_args: "-c /" made resolve_tokenizer_path look for a Hugging Face checkpoint
  // there; the fuzzer's invariant did not expect the file error, the app reports it.
  const CliRun r = run_cli({"-c", "/", "-p", "hi"});
  CHECK(r.code == 1);
  CHECK_THAT(r.err, StartsWith("llama-cli: /: ") && Contains("model.safetensors"));
  CHECK(r.err.find('\n') == r.err.size() - 1);
}
