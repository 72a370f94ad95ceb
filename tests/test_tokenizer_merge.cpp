// The llama2.c encoder's priority-queue merge against run.c's own algorithm
// (rescan every adjacent pair after each merge, take the best score, the
// leftmost on ties) on random texts, tie-heavy vocabularies and a long text.
#include <catch2/catch.hpp>
#include <fstream>
#include <random>
#include <sstream>

#include "llama/tokenizers/llama2c_tokenizer.hpp"
#include "test_support.hpp"

using llama::Llama2cTokenizer;
using namespace llama::test;

namespace {

// run.c's encode, transcribed: BOS, dummy prefix, code points with byte
// fallback, then the quadratic merge loop.
std::vector<int32_t> run_c_encode(const Llama2cTokenizer& tok, std::string_view text) {
  std::vector<int32_t> tokens = {llama::kBosToken};
  auto push_bytes = [&](std::string_view bytes) {
    for (unsigned char b : bytes) tokens.push_back(static_cast<int32_t>(b) + 3);
  };
  if (!text.empty()) {
    const int32_t space = tok.lookup(" ");
    if (space >= 0) {
      tokens.push_back(space);
    } else {
      push_bytes(" ");
    }
  }
  for (size_t start = 0; start < text.size();) {
    size_t end = start + 1;
    while (end < text.size() && end - start < 4 &&
           (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) {
      ++end;
    }
    const int32_t id = tok.lookup(text.substr(start, end - start));
    if (id >= 0) {
      tokens.push_back(id);
    } else {
      push_bytes(text.substr(start, end - start));
    }
    start = end;
  }
  while (true) {
    float best_score = -1e10f;
    int32_t best_id = -1;
    size_t best_idx = 0;
    for (size_t i = 0; i + 1 < tokens.size(); ++i) {
      const std::string merged =
          std::string(tok.piece(tokens[i])) + std::string(tok.piece(tokens[i + 1]));
      const int32_t id = tok.lookup(merged);
      if (id >= 0 && tok.score(id) > best_score) {
        best_score = tok.score(id);
        best_id = id;
        best_idx = i;
      }
    }
    if (best_id < 0) break;
    tokens[best_idx] = best_id;
    tokens.erase(tokens.begin() + static_cast<std::ptrdiff_t>(best_idx) + 1);
  }
  return tokens;
}

// Random text from an alphabet mixing ASCII, multi-byte characters and stray bytes.
std::string random_text(std::mt19937& rng, size_t max_len) {
  static const std::vector<std::string> alphabet = {
      "a",    "e",        "t",     "h",    "o",  "n",  "s",    " ",
      " ",    " ",        ",",     ".",    "\n", "1",  "9",    "T",
      "'",    "the",      "ing",   " and", "é",  "日", "🦙", "\xE2\x96\x81",
      "\x80", "\xF0\x9F", "<0x41>"};
  std::uniform_int_distribution<size_t> len(0, max_len), pick(0, alphabet.size() - 1);
  std::string s;
  for (size_t i = len(rng); i > 0; --i) s += alphabet[pick(rng)];
  return s;
}

// A tokenizer.bin whose entries all score the same: every merge is a tie.
std::vector<std::byte> tied_vocabulary() {
  std::vector<std::string> pieces = {"<unk>", "<s>", "</s>"};
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    pieces.emplace_back(name);
  }
  for (const char* p : {" ", "a", "b", "ab", "ba", "aa", "bb", "aba", "bab", "abab", " a", " b"}) {
    pieces.emplace_back(p);
  }
  std::vector<std::byte> out;
  append(out, int32_t{16});
  for (const std::string& p : pieces) {
    append(out, 0.0f);
    append(out, static_cast<int32_t>(p.size()));
    for (char ch : p) out.push_back(static_cast<std::byte>(ch));
  }
  return out;
}

}  // namespace

TEST_CASE("llama2.c encode: the priority-queue merge gives run.c's ids on random texts",
          "[tokenizer][merge]") {
  const Llama2cTokenizer llama2(model_path("tokenizer.bin"), 32000);
  const Llama2cTokenizer tok2048(model_path("tok2048.bin"), 2048);
  std::mt19937 rng(20261201);
  for (int i = 0; i < 300; ++i) {
    const std::string text = random_text(rng, 60);
    INFO("text: " << text);
    REQUIRE(llama2.encode(text, true, false) == run_c_encode(llama2, text));
    REQUIRE(tok2048.encode(text, true, false) == run_c_encode(tok2048, text));
  }
}

TEST_CASE("llama2.c encode: ties merge leftmost first, as run.c", "[tokenizer][merge]") {
  const Llama2cTokenizer tied = Llama2cTokenizer::parse(tied_vocabulary(), "tied.bin", 0);
  CHECK(tied.vocab_size() == 3 + 256 + 12);
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> coin(0, 2);
  for (int i = 0; i < 300; ++i) {
    std::string text;
    for (int n = i % 40; n > 0; --n) text += "ab "[coin(rng)];
    INFO("text: " << text);
    REQUIRE(tied.encode(text, true, false) == run_c_encode(tied, text));
  }
  // " abab": " a" (leftmost of four ties), then "ba" (left of "ab"), then "bab";
  // a rightmost-first or pair-at-a-time order would end in "abab".
  CHECK(tied.encode("abab", false, false) ==
        std::vector<int32_t>{tied.lookup(" a"), tied.lookup("bab")});
}

TEST_CASE("llama2.c encode: a 200 KB text encodes and spells itself back", "[tokenizer][merge]") {
  // run.c's rescanning loop needs minutes for this; the merge queue a fraction of a second.
  std::ifstream in(model_path("stories1M-val.txt"), std::ios::binary);
  std::ostringstream all;
  all << in.rdbuf();
  const std::string text = all.str();
  REQUIRE(text.size() > 200000);
  const Llama2cTokenizer tok(model_path("tok2048.bin"), 2048);
  const std::vector<int32_t> ids = tok.encode(text, true, false);
  REQUIRE(ids.front() == llama::kBosToken);
  CHECK(ids.size() < text.size() / 2);  // merged, not one token per byte
  std::string spelled;
  for (size_t i = 1; i < ids.size(); ++i) {
    const int32_t id = ids[i];
    spelled += (id >= 3 && id < 259) ? std::string(1, static_cast<char>(id - 3))
                                     : std::string(tok.piece(id));
  }
  CHECK(spelled == " " + text);
}
