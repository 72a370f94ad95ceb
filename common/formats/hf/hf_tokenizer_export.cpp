// sentencepiece_tokenizer_json: the vocabulary, then SentencePieceExtractor's
// merges: for every piece (in id order) each split into two vocabulary pieces,
// ordered by their ids, then all of them stably sorted by the piece's score,
// highest first.
#include "llama/formats/hf_tokenizer_export.hpp"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <unordered_map>
#include <vector>

#include "llama/error.hpp"

namespace llama {
namespace {

using ojson = nlohmann::ordered_json;

// Byte offsets of the code point boundaries inside `s` (0 and s.size() excluded);
// false if `s` is not UTF-8.
bool code_point_cuts(const std::string& s, std::vector<size_t>& cuts) {
  cuts.clear();
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    const size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    }
    i += n;
    if (i < s.size()) cuts.push_back(i);
  }
  return true;
}

std::string spaces_to_meta(const std::string& piece) {
  std::string out;
  for (char c : piece) {
    if (c == ' ')
      out += "\xE2\x96\x81";  // U+2581, SentencePiece's space
    else
      out += c;
  }
  return out;
}

ojson special(int id, const char* content) {
  return {{"id", id},        {"content", content},  {"single_word", false}, {"lstrip", false},
          {"rstrip", false}, {"normalized", false}, {"special", true}};
}

}  // namespace

std::string sentencepiece_tokenizer_json(std::span<const std::string> pieces,
                                         std::span<const float> scores, const std::string& source) {
  if (pieces.size() < 3 || scores.size() != pieces.size() || pieces[0] != "<unk>" ||
      pieces[1] != "\n<s>\n" || pieces[2] != "\n</s>\n") {
    throw Error(source +
                ": not a SentencePiece Llama vocabulary (ids 0, 1, 2 must be <unk>, "
                "<s>, </s> as llama2.c's tokenizer export writes them); no tokenizer.json written");
  }
  std::vector<std::string> vocab = {"<unk>", "<s>", "</s>"};
  for (size_t i = 3; i < pieces.size(); ++i) vocab.push_back(spaces_to_meta(pieces[i]));
  std::unordered_map<std::string_view, int32_t> ids;
  for (size_t i = 0; i < vocab.size(); ++i) {
    if (std::isnan(scores[i])) {
      throw Error(source + ": the score of piece " + std::to_string(i) + " is NaN");
    }
    ids.emplace(vocab[i], static_cast<int32_t>(i));  // the first id of a repeated piece
  }
  struct Merge {
    int32_t left, right;
    float score;
  };
  std::vector<Merge> merges;
  std::vector<size_t> cuts;
  std::vector<Merge> local;
  for (size_t i = 0; i < vocab.size(); ++i) {
    if (ids.at(vocab[i]) != static_cast<int32_t>(i)) continue;  // a dict keeps one entry
    if (!code_point_cuts(vocab[i], cuts)) {
      throw Error(source + ": piece " + std::to_string(i) + " is not UTF-8");
    }
    // Scores as in the SentencePiece model: llama2.c wrote 0 for the three specials.
    const float score = i < 3 ? 0.0f : scores[i];
    local.clear();
    const std::string_view p = vocab[i];
    for (size_t cut : cuts) {
      const auto l = ids.find(p.substr(0, cut));
      const auto r = ids.find(p.substr(cut));
      if (l != ids.end() && r != ids.end()) local.push_back({l->second, r->second, score});
    }
    std::sort(local.begin(), local.end(), [](const Merge& a, const Merge& b) {
      return std::pair(a.left, a.right) < std::pair(b.left, b.right);
    });
    merges.insert(merges.end(), local.begin(), local.end());
  }
  std::stable_sort(merges.begin(), merges.end(),
                   [](const Merge& a, const Merge& b) { return a.score > b.score; });

  ojson model = {{"type", "BPE"},
                 {"dropout", nullptr},
                 {"unk_token", "<unk>"},
                 {"continuing_subword_prefix", nullptr},
                 {"end_of_word_suffix", nullptr},
                 {"fuse_unk", true},
                 {"byte_fallback", true}};
  ojson& v = model["vocab"] = ojson::object();
  for (size_t i = 0; i < vocab.size(); ++i) {
    if (!v.contains(vocab[i])) v[vocab[i]] = i;
  }
  ojson& m = model["merges"] = ojson::array();
  for (const Merge& x : merges) {
    m.push_back(vocab[static_cast<size_t>(x.left)] + " " + vocab[static_cast<size_t>(x.right)]);
  }
  ojson j = {
      {"version", "1.0"},
      {"truncation", nullptr},
      {"padding", nullptr},
      {"added_tokens", {special(0, "<unk>"), special(1, "<s>"), special(2, "</s>")}},
      {"normalizer",
       {{"type", "Sequence"},
        {"normalizers",
         {{{"type", "Prepend"}, {"prepend", "\xE2\x96\x81"}},
          {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "\xE2\x96\x81"}}}}}},
      {"pre_tokenizer", nullptr},
      {"post_processor",
       {{"type", "TemplateProcessing"},
        {"single",
         {{{"SpecialToken", {{"id", "<s>"}, {"type_id", 0}}}},
          {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}}},
        {"pair",
         {{{"SpecialToken", {{"id", "<s>"}, {"type_id", 0}}}},
          {{"Sequence", {{"id", "A"}, {"type_id", 0}}}},
          {{"SpecialToken", {{"id", "<s>"}, {"type_id", 1}}}},
          {{"Sequence", {{"id", "B"}, {"type_id", 1}}}}}},
        {"special_tokens", {{"<s>", {{"id", "<s>"}, {"ids", {1}}, {"tokens", {"<s>"}}}}}}}},
      {"decoder",
       {{"type", "Sequence"},
        {"decoders",
         {{{"type", "Replace"}, {"pattern", {{"String", "\xE2\x96\x81"}}}, {"content", " "}},
          {{"type", "ByteFallback"}},
          {{"type", "Fuse"}},
          {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}}}}}},
      {"model", std::move(model)}};
  return j.dump(2, ' ', /*ensure_ascii=*/false) + "\n";
}

std::string sentencepiece_tokenizer_config_json(int64_t model_max_length) {
  const ojson j = {{"add_bos_token", true},
                   {"add_eos_token", false},
                   {"bos_token", "<s>"},
                   {"eos_token", "</s>"},
                   {"unk_token", "<unk>"},
                   {"clean_up_tokenization_spaces", false},
                   {"legacy", true},
                   {"tokenizer_class", "LlamaTokenizer"},
                   {"model_max_length", model_max_length}};
  return j.dump(2) + "\n";
}

}  // namespace llama
