// Regressions for what fuzzing found (fuzz/): each input is the one libFuzzer
// saved, fed to the same entry point, with the behaviour now expected.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "cli_options.hpp"
#include "cli_run.hpp"
#include "command_line.hpp"
#include "llama/error.hpp"
#include "llama/formats/gguf_file.hpp"
#include "llama/formats/safetensors.hpp"
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

// Issue 39: --verify-checkpoint on a file whose weights are all infinite exited 1
// with the report on stdout and nothing on stderr. Now the report says how many
// values are not finite per tensor and the run ends in one error line naming the
// file, the first such tensor and the counts, for each format.
namespace {

// `from` copied to the temp dir as `name` with bytes [begin, end) overwritten by `value`.
std::string with_floats(const std::string& from, const std::string& name, size_t begin, size_t end,
                        float value) {
  std::vector<std::byte> bytes = llama::test::read_file(from);
  REQUIRE(end <= bytes.size());
  for (size_t at = begin; at + 4 <= end; at += 4) std::memcpy(bytes.data() + at, &value, 4);
  const std::string path = llama::test::temp_path(name);
  llama::test::write_file(path, bytes);
  return path;
}

// Exit 1, the report on stdout, one line on stderr containing every part of `why`.
void require_not_finite(const std::string& path, const std::vector<std::string>& why) {
  const CliRun r = run_cli({"-c", path, "--verify-checkpoint"});
  INFO(r.err);
  CHECK(r.code == 1);
  CHECK_THAT(r.out, Contains("NOT FINITE") && Contains("some values are not finite"));
  CHECK_THAT(r.err, StartsWith("llama-cli: " + path + ": "));
  CHECK(r.err.find('\n') == r.err.size() - 1);
  for (const std::string& w : why) CHECK_THAT(r.err, Contains(w));
}

}  // namespace

TEST_CASE("verify-checkpoint names the tensors whose values are not finite, in every format",
          "[robustness][cli]") {
  const float inf = std::numeric_limits<float>::infinity();
  using llama::test::model_path;
  // llama2.c version 0: every weight +inf (stories260K: 11 tensors, 263,936 floats and
  // the two rope tables, which are not weights).
  const std::string v0 =
      with_floats(model_path("stories260K.bin"), "inf-v0.bin", 28,
                  llama::test::read_file(model_path("stories260K.bin")).size(), inf);
  require_not_finite(v0, {"token_embedding has 32768 of 32768 values (32768 +inf, 0 -inf, 0 NaN)",
                          "in 11 of 11 tensors"});
  const CliRun r0 = run_cli({"-c", v0, "--verify-checkpoint"});
  CHECK_THAT(r0.out, Contains("f32  no finite values  NOT FINITE: 32768 of 32768 values"));
  // Version 2: the same bytes after the f32 norms (3 layers x 2 x 128 + 128 floats) make every
  // group scale infinite and the int8 values 0, 0, -128, 127: NaN, NaN, -inf, +inf.
  const std::string v2 =
      with_floats(model_path("q-gqa.v2.bin"), "inf-v2.bin", 256 + 4 * (3 * 2 * 128 + 128),
                  llama::test::read_file(model_path("q-gqa.v2.bin")).size(), inf);
  require_not_finite(v2, {"inf-v2.bin: token_embedding has 4096000 of 4096000 values "
                          "(1024000 +inf, 1024000 -inf, 2048000 NaN)",
                          "in 9 of 12 tensors"});
  CHECK_THAT(run_cli({"-c", v2, "--verify-checkpoint"}).out,
             Contains("scales [inf, -inf] (64000 not finite)  dequantized no finite values"));
  // GGUF: output_norm.weight made NaN.
  const std::string gguf_in = model_path("gguf/stories1M.f32.gguf");
  const llama::gguf::File f = llama::gguf::File::open(gguf_in);
  const llama::gguf::Tensor* norm = f.find_tensor("output_norm.weight");
  REQUIRE(norm != nullptr);
  const size_t at = f.data_offset() + norm->offset;
  const std::string gguf = with_floats(gguf_in, "nan.gguf", at, at + 128 * 4, std::nanf(""));
  require_not_finite(gguf, {"output_norm.weight has 128 of 128 values (0 +inf, 0 -inf, 128 NaN)",
                            "128 values in all are not finite, in 1 of "});
  // Hugging Face: model.norm.weight made -inf, in a copy of the directory.
  const std::string dir = llama::test::temp_path("hf-ninf");
  std::filesystem::create_directories(dir);
  for (const char* name :
       {"config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json"}) {
    std::filesystem::copy_file(model_path("hf/stories1M/") + name, dir + "/" + name);
  }
  const llama::SafetensorsFile st =
      llama::SafetensorsFile::open(model_path("hf/stories1M/model.safetensors"));
  const llama::SafetensorsTensor* hf_norm = st.find("model.norm.weight");
  REQUIRE(hf_norm != nullptr);
  const auto begin = static_cast<size_t>(hf_norm->offset);
  const std::string weights =
      with_floats(model_path("hf/stories1M/model.safetensors"), "hf-ninf/model.safetensors", begin,
                  begin + 128 * 4, -inf);
  const CliRun hf = run_cli({"-c", dir, "--verify-checkpoint"});
  CHECK(hf.code == 1);
  CHECK_THAT(hf.err, StartsWith("llama-cli: " + weights +
                                ": model.norm.weight has 128 of 128 "
                                "values (0 +inf, 128 -inf, 0 NaN)"));
  CHECK(hf.err.find('\n') == hf.err.size() - 1);
  // A clean file still ends with the report alone and exit 0.
  const CliRun ok = run_cli({"-c", model_path("stories260K.bin"), "--verify-checkpoint"});
  CHECK(ok.code == 0);
  CHECK(ok.err.empty());
  CHECK_THAT(ok.out, Contains("all values finite"));
}
