// tokenizer.json pipelines that grow a text without end or backtrack for
// minutes (issue 39): each is refused with one line naming the file and the
// limit, before the work is done; small growth still works; and the budgeted
// regex search (windows, anchored retries) finds exactly what one PCRE2 search
// over the whole text finds.
#include <catch2/catch.hpp>
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "../common/tokenizers/bpe/regex.hpp"
#include "llama/error.hpp"
#include "llama/tokenizers/hf_tokenizer.hpp"

using Catch::Matchers::Contains;
using Catch::Matchers::Equals;
using Catch::Matchers::StartsWith;
using nlohmann::json;

namespace {

// Single characters a..z and space, no merges: every text of them encodes.
json plain_doc() {
  json vocab = json::object();
  for (char c = 'a'; c <= 'z'; ++c) vocab[std::string(1, c)] = c - 'a';
  vocab[" "] = 26;
  return json{{"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", json::array()}}}};
}

json replace(const std::string& from, const std::string& to) {
  return {{"type", "Replace"}, {"pattern", {{"String", from}}}, {"content", to}};
}

json sequence(const char* list_key, const json& step, size_t n) {
  json steps = json::array();
  for (size_t i = 0; i < n; ++i) steps.push_back(step);
  return {{"type", "Sequence"}, {list_key, steps}};
}

json split(const std::string& regex) {
  return {{"type", "Split"}, {"pattern", {{"Regex", regex}}}, {"behavior", "Isolated"}};
}

std::unique_ptr<llama::BpeTokenizer> parse(const json& doc) {
  return llama::parse_hf_tokenizer(doc.dump(), "", "t.json");
}

// What one unanchored PCRE2 search per match over the whole text finds.
std::vector<std::pair<size_t, size_t>> plain_matches(const std::string& pattern,
                                                     const std::string& text) {
  int err = 0;
  PCRE2_SIZE at_err = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                   PCRE2_UTF | PCRE2_UCP, &err, &at_err, nullptr);
  REQUIRE(code != nullptr);
  pcre2_match_data* md = pcre2_match_data_create_from_pattern(code, nullptr);
  std::vector<std::pair<size_t, size_t>> out;
  size_t at = 0;
  while (at < text.size()) {
    const int rc = pcre2_match(code, reinterpret_cast<PCRE2_SPTR>(text.data()), text.size(), at, 0,
                               md, nullptr);
    if (rc < 0) break;
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
    if (ov[1] > ov[0]) {
      out.emplace_back(ov[0], ov[1]);
      at = ov[1];
    } else {
      at = ov[0] + 1;
      while (at < text.size() && (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80) ++at;
    }
  }
  pcre2_match_data_free(md);
  pcre2_code_free(code);
  return out;
}

}  // namespace

TEST_CASE("tokenizer.json: a normalizer that multiplies the text is refused before it grows",
          "[tokenizer][hf][limits]") {
  json doc = plain_doc();
  // Issue 39: 48 chained Replace a -> aa would make 2^48 bytes of one "a".
  doc["normalizer"] = sequence("normalizers", replace("a", "aa"), 48);
  const auto tok = parse(doc);
  CHECK_THROWS_WITH(tok->encode("a"),
                    StartsWith("t.json: normalizer step 12 (Replace) would make the text longer "
                               "than the 4112 bytes allowed for this input (16 per input byte + "
                               "4096, at most 1073741824)"));
  // The bound is per input byte of the whole encode, not per segment.
  CHECK_THROWS_WITH(tok->encode(std::string(1000, 'b') + "a"), Contains("normalizer step 14"));
  // Growth a real normalizer makes still works: 3 steps, 8 times.
  doc["normalizer"] = sequence("normalizers", replace("a", "aa"), 3);
  CHECK(parse(doc)->encode("a b") == std::vector<int32_t>{0, 0, 0, 0, 0, 0, 0, 0, 26, 1});
}

TEST_CASE("tokenizer.json: Prepend steps are bounded at load and per input byte",
          "[tokenizer][hf][limits]") {
  json doc = plain_doc();
  // Issue 39: 400 Prepend steps of 100 KB.
  doc["normalizer"] = sequence(
      "normalizers", {{"type", "Prepend"}, {"prepend", std::string(100 * 1024, 'a')}}, 400);
  CHECK_THROWS_WITH(parse(doc), Equals("t.json: normalizer.normalizers[].prepend is a 102400-byte "
                                       "string, more than 4096"));
  doc["normalizer"] =
      sequence("normalizers", {{"type", "Prepend"}, {"prepend", std::string(4096, 'a')}}, 400);
  CHECK_THROWS_WITH(parse(doc), Equals("t.json: normalizer has 400 steps, more than 64"));
  doc["normalizer"] = {{"type", "Prepend"}, {"prepend", std::string(1000, 'a')}};
  CHECK_THROWS_WITH(parse(doc), Equals("t.json: normalizer step 0 (Prepend) has a 1000-byte "
                                       "string, more than 256"));
  // 64 steps of 256 bytes pass the load checks; the encode refuses the 17th.
  doc["normalizer"] =
      sequence("normalizers", {{"type", "Prepend"}, {"prepend", std::string(256, 'a')}}, 64);
  CHECK_THROWS_WITH(parse(doc)->encode("a"), StartsWith("t.json: normalizer step 16 (Prepend)"));
  doc["decoder"] = sequence("decoders", replace("a", "b"), 65);
  CHECK_THROWS_WITH(parse(doc), Equals("t.json: decoder has 65 steps, more than 64"));
}

TEST_CASE("tokenizer.json: the pipeline's components hold a bounded number of values",
          "[tokenizer][hf][limits]") {
  json doc = plain_doc();
  // Issue 39's probe: a TemplateProcessing of a million special tokens took 20 s and 1 GB.
  const json special = {{"SpecialToken", {{"id", "a"}, {"type_id", 0}}}};
  json single = json::array();
  for (int i = 0; i < 70000; ++i) single.push_back(special);
  single.push_back({{"Sequence", {{"id", "A"}, {"type_id", 0}}}});
  doc["post_processor"] = {
      {"type", "TemplateProcessing"},
      {"single", single},
      {"pair", json::array()},
      {"special_tokens", {{"a", {{"id", "a"}, {"ids", {0}}, {"tokens", {"a"}}}}}}};
  CHECK_THROWS_WITH(parse(doc), StartsWith("t.json: post_processor.single") &&
                                    Contains("hold more than 65536 values"));
  // A few thousand, more than any real pipeline, still read.
  single.erase(single.begin(), single.begin() + 66000);
  doc["post_processor"]["single"] = single;
  CHECK(parse(doc)->encode("b").size() == 4001);
}

TEST_CASE("tokenizer.json: a decoder that multiplies a piece is refused before it grows",
          "[tokenizer][hf][limits]") {
  json doc = plain_doc();
  doc["decoder"] = sequence("decoders", replace("a", "aa"), 48);
  const auto tok = parse(doc);
  const std::string message =
      "t.json: decoder step 6 (Replace) would make a token longer than 80 bytes (16 per byte of "
      "its piece + 64)";
  CHECK_THROWS_WITH(tok->decode(std::vector<int32_t>{1, 0}), Equals(message));
  CHECK_THROWS_WITH(tok->stream()->push(0), Equals(message));
  CHECK_THROWS_WITH(tok->decode_token(1, 0), Equals(message));
  doc["decoder"] = sequence("decoders", replace("a", "aa"), 4);
  CHECK(parse(doc)->decode(std::vector<int32_t>{1, 0}) == "b" + std::string(16, 'a'));
}

TEST_CASE("tokenizer.json: a Split regex that backtracks or rescans is refused within its budget",
          "[tokenizer][hf][limits]") {
  json doc = plain_doc();
  const std::string text(100 * 1024, 'a');
  // Issue 39: 9 million steps at each of 100,000 positions, each under PCRE2's match limit.
  doc["pre_tokenizer"] = split(".{0,3000}.{0,3000}[^a]");
  CHECK_THROWS_WITH(parse(doc)->encode(text),
                    StartsWith("t.json: pre_tokenizer Split regex: matching at input offset ") &&
                        Contains("passes the regex budget for this input (2048 units per input "
                                 "byte + 67108864 = 276824064)"));
  // One or two counted steps per position, each reading the rest of the text.
  for (const char* rescans : {"(?=[^x]*+[0-9])", "(?:a|b)*+\\d", "(?:.(?=[^x]*+y))*z"}) {
    INFO(rescans);
    doc["pre_tokenizer"] = split(rescans);
    CHECK_THROWS_WITH(parse(doc)->encode(text), Contains("passes the regex budget"));
  }
  // Long lookbehinds are refused when the file is read.
  doc["pre_tokenizer"] = split("(?<=[^x]{300})a");
  CHECK_THROWS_WITH(parse(doc), Equals("t.json: pre_tokenizer Split regex: a lookbehind reads 300 "
                                       "characters back, more than 255"));
  doc["pre_tokenizer"] = split(std::string(5000, 'a'));
  CHECK_THROWS_WITH(parse(doc), Equals("t.json: pre_tokenizer.pattern.Regex is a 5000-byte string, "
                                       "more than 4096"));
  // The same limits hold for a pipeline built in memory (GGUF vocabularies).
  llama::BpeTokenizerSpec spec;
  spec.source = "v.gguf";
  spec.model.vocab = {"a"};
  spec.pre_tokenizer.push_back({llama::PreTokenizerStep::Kind::split, std::string(5000, 'a')});
  CHECK_THROWS_WITH(llama::BpeTokenizer(spec),
                    Equals("v.gguf: pre_tokenizer step 0 (Split) has a 5000-byte regex, more than "
                           "4096"));
  // Long matches and runs a real pattern backtracks over stay within it.
  doc["pre_tokenizer"] = split("\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+|a+");
  CHECK(parse(doc)->encode(std::string(1 << 20, ' ') + text).size() == (1 << 20) + text.size());
}

TEST_CASE("tokenizer.json: a vocab id the file cannot hold is refused before allocating",
          "[tokenizer][hf][limits]") {
  // fuzz_tokenizer_json: 147 bytes asked for 12 million entries (400 MB) and a scan of them.
  const std::string text = R"({"model":{"vocab":{"<unk>":0,"<s>":12222222,"h":1}}})";
  CHECK_THROWS_WITH(
      llama::parse_hf_tokenizer(text, "", "t.json"),
      Equals("t.json: model.vocab: \"<s>\" has id 12222222, outside [0, " +
             std::to_string(text.size() / 4 + 1) + ") (the entries this file's size can hold)"));
}

TEST_CASE("bpe::Regex: the budgeted search finds what one search over the whole text finds",
          "[tokenizer][hf][limits]") {
  const std::vector<std::string> patterns = {
      R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)",
      R"(\p{N}{1,3})",
      R"(a+$)",
      R"(\w+\z)",
      R"(\b\w)",
      R"(\w\b)",
      R"(a{40})",
      R"((?<=a)b+)",
      R"(x|a{50}|a)",
      R"(a(?=.{45}))",
      R"()",
      R"(a*)",
      R"((?:ab)+)",
      R"([^x]*y)",
      R"(é+|中)",
      R"(\X)"};
  const char* alphabet[] = {"a", "a", "b", " ", "\n", "x", "y", "é", "中", "1", "😀", "'", "s"};
  std::mt19937 rng(39);
  for (const std::string& pattern : patterns) {
    const llama::bpe::Regex re(pattern, "t.json", "test");
    for (int t = 0; t < 60; ++t) {
      std::string text;
      const size_t letters = t % 3 == 0 ? 13 : 3;  // often runs of a and b only
      for (int i = 0, n = static_cast<int>(rng() % 300); i < n; ++i)
        text += alphabet[rng() % letters];
      llama::bpe::Budget budget(UINT64_MAX);
      std::vector<std::pair<size_t, size_t>> found;
      re.for_each_match(text, 0, budget, [&](size_t s, size_t e) { found.emplace_back(s, e); });
      INFO(pattern << " on \"" << text << "\"");
      CHECK(found == plain_matches(pattern, text));
    }
  }
}
