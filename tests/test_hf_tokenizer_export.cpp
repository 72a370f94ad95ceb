// tokenizer.bin -> tokenizer.json as transformers' LlamaConverter writes it:
// tok2048.bin and tokenizer.bin give exactly the shared hf/stories1M and
// hf/llama2-tokenizer files (converted from the same SentencePiece models).
#include <catch2/catch.hpp>
#include <cmath>
#include <tuple>

#include "llama/error.hpp"
#include "llama/formats/hf_tokenizer_export.hpp"
#include "llama/tokenizers/llama2c_tokenizer.hpp"
#include "test_support.hpp"

using Catch::Matchers::Contains;
using namespace llama::test;

namespace {

std::string export_json(const std::string& bin, int64_t vocab) {
  const llama::Llama2cTokenizer tok(model_path(bin), vocab);
  std::vector<std::string> pieces;
  std::vector<float> scores;
  for (int32_t i = 0; i < vocab; ++i) {
    pieces.emplace_back(tok.piece(i));
    scores.push_back(tok.score(i));
  }
  return llama::sentencepiece_tokenizer_json(pieces, scores, bin);
}

}  // namespace

TEST_CASE("tokenizer.bin exports to the tokenizer.json HF's converter writes", "[hf][tokenizer]") {
  for (const auto& [bin, vocab, dir] :
       {std::tuple{"tok2048.bin", 2048, "hf/stories1M"},
        std::tuple{"tokenizer.bin", 32000, "hf/llama2-tokenizer"}}) {
    INFO(bin);
    const nlohmann::json ours = nlohmann::json::parse(export_json(bin, vocab));
    const nlohmann::json theirs = load_json(model_path(std::string(dir) + "/tokenizer.json"));
    CHECK(ours["model"]["vocab"] == theirs["model"]["vocab"]);
    CHECK(ours["model"]["merges"] == theirs["model"]["merges"]);
    CHECK(ours == theirs);
    CHECK(nlohmann::json::parse(llama::sentencepiece_tokenizer_config_json(4096)) ==
          load_json(model_path(std::string(dir) + "/tokenizer_config.json")));
  }
}

TEST_CASE("tokenizer export refuses a vocabulary that is not SentencePiece Llama's",
          "[hf][tokenizer][robustness]") {
  const std::vector<std::string> pieces = {"<unk>", "\n<s>\n", "\n</s>\n", "a", "b", "ab"};
  std::vector<float> scores = {0, 0, 0, -1, -2, -3};
  const nlohmann::json j =
      nlohmann::json::parse(llama::sentencepiece_tokenizer_json(pieces, scores, "t.bin"));
  CHECK(j["model"]["merges"] == nlohmann::json{"a b"});
  auto renamed = pieces;
  renamed[1] = "<s>";
  CHECK_THROWS_WITH(llama::sentencepiece_tokenizer_json(renamed, scores, "t.bin"),
                    Contains("t.bin: not a SentencePiece Llama vocabulary"));
  auto bad = pieces;
  bad[4] = std::string(1, static_cast<char>(0xff));
  CHECK_THROWS_WITH(llama::sentencepiece_tokenizer_json(bad, scores, "t.bin"),
                    Contains("t.bin: piece 4 is not UTF-8"));
  scores[3] = std::nanf("");
  CHECK_THROWS_WITH(llama::sentencepiece_tokenizer_json(pieces, scores, "t.bin"),
                    Contains("t.bin: the score of piece 3 is NaN"));
}
