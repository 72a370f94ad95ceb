// Added tokens found in text before the model runs, as Hugging Face's
// AddedVocabulary does: the leftmost match, the longest there; a special
// token's match is left as text when special parsing is off; single_word,
// lstrip and rstrip as tokenizers applies them.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "llama/tokenizers/bpe_tokenizer.hpp"

namespace llama::bpe {

// A piece of the input: an added token (id >= 0) or text between them (id -1).
struct Segment {
  std::string_view text;
  size_t offset;  // in the input given to split()
  int32_t id;
};

class AddedTokenMatcher {
 public:
  explicit AddedTokenMatcher(std::vector<AddedToken> tokens);
  bool empty() const { return tokens_.empty(); }
  // Appends the segments of `text` (offsets from `base`); text segments may be empty-free.
  void split(std::string_view text, size_t base, bool parse_special,
             std::vector<Segment>& out) const;

 private:
  // The longest token matching at text[at], or nullptr.
  const AddedToken* longest_at(std::string_view text, size_t at) const;
  std::vector<AddedToken> tokens_;
  std::array<std::vector<uint32_t>, 256> by_first_byte_;  // indices, longest content first
};

}  // namespace llama::bpe
