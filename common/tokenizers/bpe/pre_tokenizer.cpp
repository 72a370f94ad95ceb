// PreTokenizer: Split steps run in order, each on the previous one's words,
// then the ByteLevel mapping.
#include "pre_tokenizer.hpp"

#include <cstring>

#include "byte_level.hpp"
#include "llama/error.hpp"
#include "utf8.hpp"

namespace llama::bpe {
namespace {

// GPT-2's pattern, which ByteLevel(use_regex = true) splits with.
constexpr const char* kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

// Calls fn on each maximal run of valid UTF-8 (valid = true) and of invalid bytes.
template <typename Fn>
void for_each_run(std::string_view s, Fn&& fn) {
  size_t start = 0, i = 0;
  while (i < s.size()) {
    const size_t n = static_cast<unsigned char>(s[i]) < 0x80 ? 1 : valid_char_length(s, i);
    if (n > 0) {
      i += n;
      continue;
    }
    if (i > start) fn(start, i, true);
    const size_t bad = i;
    while (i < s.size() && static_cast<unsigned char>(s[i]) >= 0x80 &&
           valid_char_length(s, i) == 0) {
      i += invalid_prefix_length(s, i);
    }
    fn(bad, i, false);
    start = i;
  }
  if (i > start) fn(start, i, true);
}

}  // namespace

PreTokenizer::PreTokenizer(const std::vector<PreTokenizerStep>& steps, const std::string& source) {
  for (size_t i = 0; i < steps.size(); ++i) {
    const PreTokenizerStep& s = steps[i];
    if (s.kind == PreTokenizerStep::Kind::split) {
      if (byte_level_) throw Error(source + ": pre_tokenizer: ByteLevel must be the last step");
      splits_.push_back(std::make_unique<Regex>(s.regex, source, "pre_tokenizer Split regex"));
    } else {
      if (byte_level_) throw Error(source + ": pre_tokenizer: ByteLevel appears twice");
      byte_level_ = true;
      add_prefix_space_ = s.add_prefix_space;
      if (s.use_regex) gpt2_ = std::make_unique<Regex>(kGpt2Pattern, source, "ByteLevel regex");
    }
  }
}

void PreTokenizer::split(std::string_view text, size_t offset, Budget& budget,
                         const std::function<void(std::string_view, size_t)>& on_word) const {
  if (text.empty()) return;
  if (!byte_level_) {
    split_from(0, text, offset, budget, on_word);
    return;
  }
  // ByteLevel maps each final word; with add_prefix_space each word the earlier
  // steps made starts with a space (tokenizers prepends it per split).
  std::string mapped;
  const ByteLevelMap& map = byte_level_map();
  std::string spaced;
  auto map_word = [&](std::string_view word, size_t at) {
    mapped.clear();
    map.map(word, mapped);
    on_word(mapped, at);
  };
  auto finish = [&](std::string_view word, size_t at) {
    if (add_prefix_space_ && word[0] != ' ') {
      spaced.resize(word.size() + 1);
      spaced[0] = ' ';
      word.copy(spaced.data() + 1, word.size());
      word = spaced;
    }
    if (!gpt2_) {
      map_word(word, at);
      return;
    }
    const std::string copy(word);  // `spaced` may be reused below
    for_each_run(copy, [&](size_t a, size_t b, bool valid) {
      const std::string_view run = std::string_view(copy).substr(a, b - a);
      if (!valid) return map_word(run, at + a);
      size_t last = 0;
      gpt2_->for_each_match(run, at + a, budget, [&](size_t s, size_t e) {
        if (s > last) map_word(run.substr(last, s - last), at + a + last);
        map_word(run.substr(s, e - s), at + a + s);
        last = e;
      });
      if (last < run.size()) map_word(run.substr(last), at + a + last);
    });
  };
  split_from(0, text, offset, budget, finish);
}

void PreTokenizer::split_from(size_t step, std::string_view text, size_t offset, Budget& budget,
                              const std::function<void(std::string_view, size_t)>& on_word) const {
  if (step == splits_.size()) {
    on_word(text, offset);
    return;
  }
  // "Isolated": each match is a word and so is each gap between matches.
  const Regex& re = *splits_[step];
  for_each_run(text, [&](size_t a, size_t b, bool valid) {
    const std::string_view run = text.substr(a, b - a);
    if (!valid) return split_from(step + 1, run, offset + a, budget, on_word);
    auto next = [&](size_t s, size_t e) {
      split_from(step + 1, run.substr(s, e - s), offset + a + s, budget, on_word);
    };
    size_t last = 0;
    re.for_each_match(run, offset + a, budget, [&](size_t s, size_t e) {
      if (s > last) next(last, s);
      next(s, e);
      last = e;
    });
    if (last < run.size()) next(last, run.size());
  });
}

}  // namespace llama::bpe
