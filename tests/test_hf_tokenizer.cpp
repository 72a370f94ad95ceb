// tokenizer.json through the library: every case of reference/hf-tokenizer.json
// (ids, ids_no_special, decoded), streaming decode, the tokenizer.bin
// cross-check, and llama-cli --tokenize without a checkpoint.
#include <catch2/catch.hpp>
#include <map>

#include "llama/tokenizers/llama2c_tokenizer.hpp"
#include "llama/tokenizers/tokenizer.hpp"
#include "test_support.hpp"

using namespace llama::test;

namespace {

const llama::Tokenizer& hf(const std::string& name) {
  static std::map<std::string, std::unique_ptr<llama::Tokenizer>> cache;
  auto& slot = cache[name];
  if (!slot) slot = llama::open_tokenizer(model_path("hf/" + name));
  return *slot;
}

// Whole text through a stream, one token at a time (specials skipped).
std::string streamed(const llama::Tokenizer& tok, const std::vector<int32_t>& ids) {
  const auto stream = tok.stream();
  std::string out;
  for (int32_t id : ids) out += stream->push(id);
  return out + stream->finish();
}

}  // namespace

TEST_CASE("tokenizer.json: every reference case exact (ids, ids_no_special, decoded)",
          "[tokenizer][hf]") {
  const auto cases = load_json(reference_path("hf-tokenizer.json"));
  REQUIRE(cases.size() >= 45);
  for (const auto& c : cases) {
    const std::string name = c["tokenizer"].get<std::string>();
    const std::string text = c["text"].get<std::string>();
    INFO(name << ": " << text);
    const llama::Tokenizer& tok = hf(name);
    CHECK(tok.encode(text) == c["ids"].get<std::vector<int32_t>>());
    const auto no_special = c["ids_no_special"].get<std::vector<int32_t>>();
    CHECK(tok.encode(text, {.add_special = false}) == no_special);
    CHECK(tok.decode(no_special) == c["decoded"].get<std::string>());
    // The stream gives decode with special tokens skipped, whole characters only.
    CHECK(streamed(tok, no_special) == tok.decode(no_special, /*skip_special=*/true));
  }
}

TEST_CASE("tokenizer.json: the three families load with their special ids", "[tokenizer][hf]") {
  const llama::Tokenizer& l2 = hf("llama2-tokenizer");
  CHECK(l2.vocab_size() == 32000);
  CHECK(l2.special().bos == 1);
  CHECK(l2.special().eos == std::vector<int32_t>{2});
  CHECK(l2.is_special(1));
  CHECK_FALSE(l2.is_special(15043));
  CHECK(l2.lookup("▁Hello") == 15043);
  const llama::Tokenizer& l3 = hf("llama3-tokenizer");
  CHECK(l3.vocab_size() == 128256);
  CHECK(l3.special().bos == 128000);
  CHECK(l3.special().eos == std::vector<int32_t>{128001});
  CHECK(l3.piece(128009) == "<|eot_id|>");
  CHECK(l3.lookup("<|eot_id|>") == 128009);
  CHECK(l3.encode("").empty());  // no BOS: Llama 3's file adds none
  // rand-llama3's tokenizer.json adds BOS in its post-processor.
  CHECK(llama::open_tokenizer(model_path("hf/rand-llama3"))->encode("Hello world") ==
        std::vector<int32_t>{128000, 9906, 1917});
}

TEST_CASE("tokenizer.json: special parsing can be turned off", "[tokenizer][hf]") {
  const llama::Tokenizer& l3 = hf("llama3-tokenizer");
  const std::string text = "<|begin_of_text|>hello<|eot_id|>";
  CHECK(l3.encode(text) == std::vector<int32_t>{128000, 15339, 128009});
  const auto plain = l3.encode(text, {.parse_special = false});
  CHECK(std::find(plain.begin(), plain.end(), 128000) == plain.end());
  CHECK(std::find(plain.begin(), plain.end(), 128009) == plain.end());
  CHECK(l3.decode(plain) == text);
  const llama::Tokenizer& l2 = hf("llama2-tokenizer");
  CHECK(l2.encode("<s>x", {.add_special = false, .parse_special = false}).front() != 1);
}

TEST_CASE("tokenizer.json: streaming holds back a split UTF-8 character", "[tokenizer][hf]") {
  const llama::Tokenizer& l3 = hf("llama3-tokenizer");
  // "🦙" is three byte-level tokens here ([9468, 99, 247] after a space).
  const auto ids = l3.encode("a 🦙 b", {.add_special = false});
  const auto stream = l3.stream();
  std::vector<std::string> pieces;
  for (int32_t id : ids) pieces.push_back(stream->push(id));
  pieces.push_back(stream->finish());
  std::string all;
  for (const std::string& p : pieces) {
    all += p;
    CHECK(p.find("\xEF\xBF\xBD") == std::string::npos);  // never a replacement character
  }
  CHECK(all == "a 🦙 b");
  // A stream cut inside a character ends in one U+FFFD, as decode does.
  const auto cut = std::vector<int32_t>(ids.begin(), ids.begin() + 2);
  CHECK(streamed(l3, cut) == l3.decode(cut));
  CHECK(l3.decode(cut).ends_with("\xEF\xBF\xBD"));
  // SentencePiece-style byte fallback: the byte run is released when it ends.
  const llama::Tokenizer& l2 = hf("llama2-tokenizer");
  const auto crab = l2.encode("🦙!", {.add_special = false});
  CHECK(streamed(l2, crab) == "🦙!");
  CHECK(l2.decode(std::vector<int32_t>{243, 162}) ==
        "\xEF\xBF\xBD\xEF\xBF\xBD");  // an invalid run: one per byte
}

TEST_CASE("tokenizer.json and tokenizer.bin of Llama 2 give the same ids", "[tokenizer][hf]") {
  const llama::Llama2cTokenizer bin(model_path("tokenizer.bin"), 32000);
  const llama::Tokenizer& json = hf("llama2-tokenizer");
  std::vector<std::string> texts;
  for (const auto& c : load_json(reference_path("tokenizer.json"))) texts.push_back(c["text"]);
  for (const auto& c : load_json(reference_path("hf-tokenizer.json"))) texts.push_back(c["text"]);
  size_t compared = 0;
  for (const std::string& text : texts) {
    if (text.find("<s>") != std::string::npos || text.find("</s>") != std::string::npos ||
        text.find("<unk>") != std::string::npos) {
      continue;  // spells a special token: tokenizer.bin reads it as text
    }
    INFO(text);
    CHECK(bin.encode(text, true, false) == json.encode(text));
    ++compared;
  }
  CHECK(compared >= 45);
}

TEST_CASE("llama-cli --tokenize -k tokenizer.json needs no checkpoint", "[tokenizer][hf][cli]") {
  const auto cases = load_json(reference_path("hf-tokenizer.json"));
  for (const auto& c : cases) {
    const std::string name = c["tokenizer"].get<std::string>();
    const std::string text = c["text"].get<std::string>();
    INFO(name << ": " << text);
    const auto r = run_llama_cli(
        {"-k", model_path("hf/" + name), "-p", text, "--tokenize", "--format", "json"});
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["prompt_tokens"].get<std::vector<int32_t>>() == c["ids"].get<std::vector<int32_t>>());
    CHECK(j["pieces"].size() == j["prompt_tokens"].size());
  }
  // The tokenizer.json file itself (tokenizer_config.json found beside it) and --no-parse-special.
  const auto r =
      run_llama_cli({"-k", model_path("hf/llama3-tokenizer/tokenizer.json"), "-p", "<|eot_id|>",
                     "--tokenize", "--format", "json", "--no-parse-special"});
  REQUIRE(r.exit_code == 0);
  const auto ids = nlohmann::json::parse(r.out)["prompt_tokens"].get<std::vector<int32_t>>();
  CHECK(ids.size() > 1);
  CHECK(nlohmann::json::parse(r.out)["text"] == "<|eot_id|>");
  // tokenizer.bin alone: all its entries.
  const auto b = run_llama_cli(
      {"-k", model_path("tokenizer.bin"), "-p", "hello", "--tokenize", "--format", "json"});
  REQUIRE(b.exit_code == 0);
  CHECK(nlohmann::json::parse(b.out)["prompt_tokens"] == nlohmann::json::array({1, 22172}));
}

TEST_CASE("llama-cli generates the same story with tok2048.bin and its tokenizer.json",
          "[tokenizer][hf][cli]") {
  // hf/stories1M's tokenizer.json is tok2048 converted as Hugging Face converts SentencePiece.
  auto run = [](const std::string& tokenizer) {
    const auto r = run_llama_cli({"-c", model_path("stories1M.bin"), "-k", tokenizer, "-p",
                                  "Once upon a time", "-s", "80", "--format", "json"});
    REQUIRE(r.exit_code == 0);
    return nlohmann::json::parse(r.out);
  };
  const auto bin = run(model_path("tok2048.bin"));
  const auto json = run(model_path("hf/stories1M"));
  CHECK(json["prompt_tokens"] == bin["prompt_tokens"]);
  CHECK(json["generated_tokens"] == bin["generated_tokens"]);
  CHECK(json["text"] == bin["text"]);
  CHECK(bin["text"].get<std::string>().starts_with("Once upon a time, there was"));
}
