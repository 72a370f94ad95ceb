// AddedTokenMatcher: leftmost-longest matching of added tokens in text.
#include "added_tokens.hpp"

#include <algorithm>

#include "utf8.hpp"

namespace llama::bpe {
namespace {

// The code point at s[i] (valid UTF-8 assumed; a bad byte counts as itself).
uint32_t code_point_at(std::string_view s, size_t i, size_t& len) {
  len = valid_char_length(s, i);
  if (len == 0) {
    len = 1;
    return static_cast<unsigned char>(s[i]);
  }
  return decode_char(s, i, len);
}

// Rust's char::is_whitespace (Unicode White_Space).
bool is_whitespace(uint32_t c) {
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F ||
         c == 0x3000;
}

// A word character for single_word: ASCII letters, digits and '_', and every
// non-ASCII character that is not whitespace (tokenizers asks Unicode's
// alphanumeric property; punctuation outside ASCII is rare next to added tokens).
bool is_word_char(uint32_t c) {
  if (c < 0x80)
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  return !is_whitespace(c);
}

// The code point ending at s[end) (steps back over continuation bytes).
uint32_t code_point_before(std::string_view s, size_t end, size_t& start) {
  start = end - 1;
  while (start > 0 && end - start < 4 && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80)
    --start;
  size_t len = 0;
  const uint32_t cp = code_point_at(s, start, len);
  if (start + len != end) {
    start = end - 1;
    return static_cast<unsigned char>(s[end - 1]);
  }
  return cp;
}

}  // namespace

AddedTokenMatcher::AddedTokenMatcher(std::vector<AddedToken> tokens) : tokens_(std::move(tokens)) {
  for (uint32_t i = 0; i < tokens_.size(); ++i) {
    if (tokens_[i].content.empty()) continue;
    by_first_byte_[static_cast<unsigned char>(tokens_[i].content[0])].push_back(i);
  }
  for (auto& list : by_first_byte_) {
    std::stable_sort(list.begin(), list.end(), [&](uint32_t a, uint32_t b) {
      return tokens_[a].content.size() > tokens_[b].content.size();
    });
  }
}

const AddedToken* AddedTokenMatcher::longest_at(std::string_view text, size_t at) const {
  for (const uint32_t i : by_first_byte_[static_cast<unsigned char>(text[at])]) {
    const std::string& c = tokens_[i].content;
    if (text.size() - at >= c.size() && text.compare(at, c.size(), c) == 0) return &tokens_[i];
  }
  return nullptr;
}

void AddedTokenMatcher::split(std::string_view text, size_t base, bool parse_special,
                              std::vector<Segment>& out) const {
  size_t emitted = 0;  // text before this is in `out`
  size_t at = 0;
  while (at < text.size()) {
    const AddedToken* t = longest_at(text, at);
    if (t == nullptr) {
      ++at;
      continue;
    }
    size_t start = at, stop = at + t->content.size();
    at = stop;  // matches do not overlap, used or not
    if (t->special && !parse_special) continue;
    if (t->single_word) {
      size_t s = 0, len = 0;
      const bool left_ok = start == 0 || !is_word_char(code_point_before(text, start, s));
      const bool right_ok = stop == text.size() || !is_word_char(code_point_at(text, stop, len));
      if (!left_ok || !right_ok) continue;
    }
    if (t->lstrip) {
      while (start > emitted) {
        size_t s = 0;
        if (!is_whitespace(code_point_before(text, start, s))) break;
        start = s;
      }
    }
    if (t->rstrip) {
      while (stop < text.size()) {
        size_t len = 0;
        if (!is_whitespace(code_point_at(text, stop, len))) break;
        stop += len;
      }
      at = stop;
    }
    if (start > emitted) out.push_back({text.substr(emitted, start - emitted), base + emitted, -1});
    out.push_back({text.substr(start, stop - start), base + start, t->id});
    emitted = stop;
  }
  if (emitted < text.size()) out.push_back({text.substr(emitted), base + emitted, -1});
}

}  // namespace llama::bpe
