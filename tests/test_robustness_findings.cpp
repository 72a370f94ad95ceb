// Regressions for what fuzzing found (fuzz/): each input is the one libFuzzer
// saved, fed to the same entry point, with the behaviour now expected.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "llama/error.hpp"
#include "llama/tokenizer.hpp"
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
  const llama::Tokenizer tok = llama::Tokenizer::parse(file, "found.bin", vocab_size);
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
  const llama::Tokenizer tok2 = llama::Tokenizer::parse(two, "two.bin", 2);
  CHECK(tok2.encode("", true, false) == std::vector<int32_t>{1});
  CHECK_THROWS_WITH(tok2.encode("", true, true), Contains("EOS"));
}
