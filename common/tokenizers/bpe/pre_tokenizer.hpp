// The pre-tokenizer: cuts normalized text into words for the model (Split by
// a regex, then GPT-2's ByteLevel mapping), or passes it whole.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "llama/tokenizers/bpe_tokenizer.hpp"
#include "regex.hpp"

namespace llama::bpe {

class PreTokenizer {
 public:
  PreTokenizer(const std::vector<PreTokenizerStep>& steps, const std::string& source);
  bool byte_level() const { return byte_level_; }
  // Calls on_word(word, offset) for each word of `text` (offset: where the
  // text starts in the input). Byte-level words come mapped; invalid UTF-8
  // cannot reach a regex: each maximal invalid run is a word of its own. The
  // regexes' work is charged to `budget` (regex.hpp).
  void split(std::string_view text, size_t offset, Budget& budget,
             const std::function<void(std::string_view, size_t)>& on_word) const;

 private:
  void split_from(size_t step, std::string_view text, size_t offset, Budget& budget,
                  const std::function<void(std::string_view, size_t)>& on_word) const;
  std::vector<std::unique_ptr<Regex>> splits_;  // the Split steps in order
  bool byte_level_ = false;                     // a final ByteLevel step
  bool add_prefix_space_ = false;
  std::unique_ptr<Regex> gpt2_;  // ByteLevel's own split (use_regex)
};

}  // namespace llama::bpe
