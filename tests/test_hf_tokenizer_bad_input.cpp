// tokenizer.json bad input: every malformed file or component gives one
// Error naming the file and the reason; hostile texts encode or fail cleanly.
#include <catch2/catch.hpp>

#include "llama/error.hpp"
#include "llama/tokenizers/hf_tokenizer.hpp"
#include "test_support.hpp"

using Catch::Matchers::Contains;
using Catch::Matchers::Equals;
using Catch::Matchers::StartsWith;
using nlohmann::json;

namespace {

// A small byte-level tokenizer.json: the 256 byte characters, a few merges.
json byte_level_doc() {
  json vocab = json::object();
  const char* chars[] = {"a", "b", "c", "ab", "abc", "Ġ", "Ġa"};
  for (int i = 0; i < 7; ++i) vocab[chars[i]] = i;
  return json{
      {"model",
       {{"type", "BPE"}, {"vocab", vocab}, {"merges", json::array({"a b", "ab c", "Ġ a"})}}},
      {"added_tokens", json::array({{{"id", 7}, {"content", "<|end|>"}, {"special", true}}})},
      {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}}},
      {"decoder", {{"type", "ByteLevel"}}}};
}

std::unique_ptr<llama::BpeTokenizer> parse(const json& doc) {
  return llama::parse_hf_tokenizer(doc.dump(), "", "t.json");
}

}  // namespace

TEST_CASE("tokenizer.json: a small byte-level file works", "[tokenizer][hf][bad-input]") {
  const auto tok = parse(byte_level_doc());
  // " ab": Ġ a b, then "a b" (rank 0) before "Ġ a" (rank 2).
  CHECK(tok->encode("abc ab<|end|>") == std::vector<int32_t>{4, 5, 3, 7});
  CHECK(tok->decode(std::vector<int32_t>{4, 5, 3, 7}) == "abc ab<|end|>");
  CHECK(tok->vocab_size() == 8);
}

TEST_CASE("tokenizer.json: malformed files are refused with one line",
          "[tokenizer][hf][bad-input]") {
  CHECK_THROWS_WITH(llama::parse_hf_tokenizer("{\"model\": {", "", "t.json"),
                    StartsWith("t.json: malformed JSON near byte"));
  CHECK_THROWS_WITH(llama::parse_hf_tokenizer("", "", "t.json"),
                    StartsWith("t.json: malformed JSON"));
  CHECK_THROWS_WITH(llama::parse_hf_tokenizer("[1, 2]", "", "t.json"), StartsWith("t.json:"));
  CHECK_THROWS_WITH(llama::parse_hf_tokenizer("{\"version\": \"1.0\"}", "", "t.json"),
                    Contains("has no \"model\""));
  CHECK_THROWS_WITH(llama::load_hf_tokenizer(llama::test::temp_path("missing.json")),
                    Contains("missing.json"));
  json doc = byte_level_doc();
  SECTION("merges naming unknown tokens") {
    doc["model"]["merges"].push_back("a zz");
    CHECK_THROWS_WITH(parse(doc), Contains("merges entry 3") && Contains("\"zz\""));
  }
  SECTION("a merge whose result is not in the vocabulary") {
    doc["model"]["merges"].push_back("b c");
    CHECK_THROWS_WITH(parse(doc), Contains("\"bc\", which is not in the vocabulary"));
  }
  SECTION("a merge that is not two tokens") {
    doc["model"]["merges"].push_back("a b c");
    CHECK_THROWS_WITH(parse(doc), Contains("not two tokens"));
    doc["model"]["merges"] = json::array({json::array({"a", "b", "c"})});
    CHECK_THROWS_WITH(parse(doc), Contains("more than two parts"));
  }
  SECTION("merges as pairs work") {
    doc["model"]["merges"] = json::array({json::array({"a", "b"}), json::array({"ab", "c"})});
    CHECK(parse(doc)->encode("abc") == std::vector<int32_t>{4});
  }
  SECTION("duplicate and out-of-range ids") {
    doc["model"]["vocab"]["dup"] = 2;
    CHECK_THROWS_WITH(parse(doc), Contains("id 2 is both"));
    doc = byte_level_doc();
    doc["model"]["vocab"]["far"] = 100000000;
    CHECK_THROWS_WITH(parse(doc), Contains("outside [0,"));
    doc = byte_level_doc();
    doc["model"]["vocab"]["neg"] = -3;
    CHECK_THROWS_WITH(parse(doc), Contains("outside [0,"));
    doc = byte_level_doc();
    doc["model"]["vocab"]["gap"] = 9;
    CHECK_THROWS_WITH(parse(doc), Contains("no entry for id 7"));
    doc = byte_level_doc();
    doc["model"]["vocab"]["x"] = "1";
    CHECK_THROWS_WITH(parse(doc), Contains("is not an integer"));
  }
  SECTION("an added token whose id another string has") {
    doc["added_tokens"].push_back({{"id", 3}, {"content", "<x>"}});
    CHECK_THROWS_WITH(parse(doc),
                      Contains("\"<x>\" has id 3, which the vocabulary gives to \"ab\""));
    doc = byte_level_doc();
    doc["added_tokens"].push_back({{"id", 7}, {"content", "<y>"}});
    CHECK_THROWS_WITH(parse(doc), Contains("id 7 is both"));
    doc = byte_level_doc();
    doc["added_tokens"].push_back({{"id", 9}, {"content", "<z>"}});
    CHECK_THROWS_WITH(parse(doc), Contains("id 8 is neither"));
  }
  SECTION("a regex PCRE2 rejects") {
    doc["pre_tokenizer"] = {
        {"type", "Split"}, {"pattern", {{"Regex", "(a"}}}, {"behavior", "Isolated"}};
    CHECK_THROWS_WITH(parse(doc), StartsWith("t.json: pre_tokenizer Split regex: PCRE2 rejects"));
  }
  SECTION("components outside the BPE families, named") {
    doc["model"]["type"] = "WordPiece";
    CHECK_THROWS_WITH(parse(doc), Contains("model type WordPiece is not supported"));
    doc = byte_level_doc();
    doc["normalizer"] = {{"type", "NFKC"}};
    CHECK_THROWS_WITH(parse(doc), Contains("normalizer type NFKC is not supported"));
    doc = byte_level_doc();
    doc["pre_tokenizer"] = {{"type", "Whitespace"}};
    CHECK_THROWS_WITH(parse(doc), Contains("pre_tokenizer type Whitespace is not supported"));
    doc = byte_level_doc();
    doc["post_processor"] = {{"type", "RobertaProcessing"}};
    CHECK_THROWS_WITH(parse(doc), Contains("post_processor type RobertaProcessing"));
    doc = byte_level_doc();
    doc["decoder"] = {{"type", "WordPiece"}};
    CHECK_THROWS_WITH(parse(doc), Contains("decoder type WordPiece is not supported"));
    doc = byte_level_doc();
    doc["model"]["dropout"] = 0.1;
    CHECK_THROWS_WITH(parse(doc), Contains("dropout"));
  }
  SECTION("tokenizer_config.json naming a token the vocabulary lacks") {
    CHECK_THROWS_WITH(
        llama::parse_hf_tokenizer(doc.dump(), "{\"bos_token\": \"<nope>\"}", "t.json", "c.json"),
        StartsWith("c.json: bos_token \"<nope>\""));
    CHECK_THROWS_WITH(llama::parse_hf_tokenizer(doc.dump(), "{", "t.json", "c.json"),
                      StartsWith("c.json: malformed JSON"));
  }
}

TEST_CASE("tokenizer.json, tokenizer_config.json: a value of the wrong type names the file and key",
          "[tokenizer][hf][bad-input]") {
  const json doc = byte_level_doc();
  auto with_config = [&](const std::string& config) {
    return llama::parse_hf_tokenizer(doc.dump(), config, "t.json", "c.json");
  };
  // nlohmann's own exceptions (number overflow, types) never get out.
  CHECK_THROWS_WITH(with_config(R"({"x": 1, "bos_token": 1e400})"),
                    Equals("c.json: malformed JSON after key \"bos_token\": number overflow "
                           "parsing '1e400'"));
  CHECK_THROWS_WITH(with_config(std::string(100, '[') + std::string(100, ']')),
                    Equals("c.json: nested deeper than 64"));
  CHECK_THROWS_WITH(with_config(R"({"bos_token": {"content": 5}})"),
                    Equals("c.json: bos_token is neither text nor {\"content\": text}"));
  CHECK_THROWS_WITH(with_config(R"({"add_bos_token": "yes"})"),
                    Equals("c.json: add_bos_token is not true or false"));
  CHECK_THROWS_WITH(with_config("[5]"), Equals("c.json: is not a JSON object"));
  auto with = [&](const char* key, const json& value) {
    json d = doc;
    d[key] = value;
    return llama::parse_hf_tokenizer(d.dump(), "", "t.json");
  };
  CHECK_THROWS_WITH(with("added_tokens", json::array({{{"id", "7"}, {"content", "<x>"}}})),
                    Equals("t.json: added_tokens[0] needs an integer \"id\""));
  CHECK_THROWS_WITH(with("normalizer", {{"type", 5}}),
                    Equals("t.json: normalizer needs a string \"type\""));
  CHECK_THROWS_WITH(with("decoder", {{"type", "Strip"}, {"content", " "}, {"start", "1"}}),
                    Equals("t.json: decoder needs an integer \"start\""));
  CHECK_THROWS_WITH(with("post_processor", {{"type", "TemplateProcessing"}, {"single", 5}}),
                    Equals("t.json: post_processor needs an array \"single\""));
  CHECK_THROWS_WITH(
      llama::parse_hf_tokenizer(R"({"model": {"vocab": {"a": 0}}, "x": 1e400})", "", "t.json"),
      StartsWith("t.json: malformed JSON near byte"));
}

TEST_CASE("tokenizer.json: hostile texts encode or fail with one line",
          "[tokenizer][hf][bad-input]") {
  const auto l3 = llama::open_tokenizer(llama::test::model_path("hf/llama3-tokenizer"));
  const auto l2 = llama::open_tokenizer(llama::test::model_path("hf/llama2-tokenizer"));
  CHECK(l3->encode("").empty());
  CHECK(l2->encode("") == std::vector<int32_t>{1});
  // Invalid UTF-8: byte-level encodes the bytes, byte fallback their byte tokens.
  const std::string bad = "ok\xFF\xC0\x80 \xE2\x82";
  const auto ids3 = l3->encode(bad);
  CHECK(l3->decode(ids3) == "ok\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD \xEF\xBF\xBD");
  const auto ids2 = l2->encode(bad, {.add_special = false});
  CHECK(std::count(ids2.begin(), ids2.end(), 0xFF + 3) == 1);  // <0xFF>
  // Without byte tokens or unk, a character nothing covers is a clear error.
  json doc = byte_level_doc();
  doc["pre_tokenizer"] = nullptr;
  CHECK_THROWS_WITH(parse(doc)->encode("abz"),
                    StartsWith("t.json: cannot encode the input's bytes at offset 2"));
  // 10 MB: a long run without spaces, and prose-like text, in bounded time.
  const std::string run(10 << 20, 'a');
  CHECK(l3->encode(run).size() < run.size() / 2);
  CHECK(l2->encode(run, {.add_special = false}).size() < run.size() / 2);
  std::string spaces(1 << 20, ' ');
  CHECK_FALSE(l3->encode(spaces).empty());
}
