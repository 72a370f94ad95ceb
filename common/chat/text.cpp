// UTF-8 helpers: code point boundaries, Unicode whitespace, ASCII case.
#include "text.hpp"

#include <unordered_set>

#include "llama/error.hpp"
#include "tokenizers/bpe/utf8.hpp"

namespace llama::chat::text {
namespace {

// Length of the valid UTF-8 sequence starting at s[at], or 0; ASCII without
// a call, as most template text is.
size_t utf8_length(std::string_view s, size_t at) {
  return static_cast<unsigned char>(s[at]) < 0x80 ? 1 : bpe::valid_char_length(s, at);
}

bool is_space_code_point(uint32_t cp) {
  return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0xA0 || cp == 0x1680 ||
         (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F ||
         cp == 0x205F || cp == 0x3000 || cp == 0xFEFF;
}

bool is_word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

char upper(char c) { return (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c; }
char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

}  // namespace

size_t code_point_length(std::string_view s, size_t at) {
  const size_t n = utf8_length(s, at);
  return n == 0 ? 1 : n;
}

size_t code_point_length_before(std::string_view s, size_t end) {
  // A lead byte always starts a code point (a valid sequence never contains
  // one); the nearest within 4 bytes owns the bytes up to `end` if its valid
  // sequence ends exactly there, else the last byte stands alone.
  for (size_t n = 1; n <= 4 && n <= end; ++n) {
    if ((static_cast<unsigned char>(s[end - n]) & 0xC0) != 0x80) {
      return utf8_length(s, end - n) == n ? n : 1;
    }
  }
  return 1;
}

size_t code_point_count(std::string_view s) {
  size_t count = 0;
  for (size_t at = 0; at < s.size(); at += code_point_length(s, at)) ++count;
  return count;
}

size_t whitespace_at(std::string_view s, size_t at) {
  if (at >= s.size()) return 0;
  const size_t n = utf8_length(s, at);
  if (n == 0) return 0;
  return is_space_code_point(bpe::decode_char(s, at, n)) ? n : 0;
}

size_t whitespace_before(std::string_view s, size_t end) {
  // A code point is at most 4 bytes; find the one that ends at `end`.
  for (size_t n = 1; n <= 4 && n <= end; ++n) {
    const size_t at = end - n;
    if (utf8_length(s, at) == n) return whitespace_at(s, at);
    if ((static_cast<unsigned char>(s[at]) & 0xC0) != 0x80) return 0;  // not a continuation
  }
  return 0;
}

std::string_view trim_left(std::string_view s) {
  size_t at = 0;
  while (size_t n = whitespace_at(s, at)) at += n;
  return s.substr(at);
}

std::string_view trim_right(std::string_view s) {
  size_t end = s.size();
  while (size_t n = whitespace_before(s, end)) end -= n;
  return s.substr(0, end);
}

std::string_view trim(std::string_view s) { return trim_right(trim_left(s)); }

std::string_view strip_chars(std::string_view s, std::string_view chars, bool left, bool right) {
  // A set of the characters once `chars` is long, so the work stays linear in both.
  std::unordered_set<std::string_view> set;
  const bool use_set = chars.size() > 32;
  for (size_t at = 0; use_set && at < chars.size(); at += code_point_length(chars, at)) {
    set.insert(chars.substr(at, code_point_length(chars, at)));
  }
  const auto in_set = [&](std::string_view cp) {
    if (use_set) return set.count(cp) > 0;
    for (size_t at = 0; at < chars.size(); at += code_point_length(chars, at)) {
      if (chars.substr(at, code_point_length(chars, at)) == cp) return true;
    }
    return false;
  };
  size_t first = 0, last = s.size();  // byte offsets, code point boundaries
  while (left && first < last && in_set(s.substr(first, code_point_length(s, first)))) {
    first += code_point_length(s, first);
  }
  while (right && last > first &&
         in_set(s.substr(last - code_point_length_before(s, last),
                         code_point_length_before(s, last)))) {
    last -= code_point_length_before(s, last);
  }
  return s.substr(first, last - first);
}

std::string to_upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = upper(c);
  return out;
}

std::string to_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = lower(c);
  return out;
}

std::string title(std::string_view s) {
  std::string out(s);
  bool in_word = false;
  for (char& c : out) {
    const bool word = is_word_char(c);
    if (word && !in_word) c = upper(c);
    in_word = word;
  }
  return out;
}

std::string capitalize(std::string_view s) {
  std::string out(s);
  if (!out.empty()) out[0] = upper(out[0]);
  return out;
}

std::string replace(std::string_view s, std::string_view from, std::string_view to, int64_t count,
                    size_t max_bytes) {
  std::string out;
  const auto append = [&](std::string_view piece) {
    if (out.size() + piece.size() > max_bytes) {
      throw Error("replace: the result exceeds " + std::to_string(max_bytes) + " bytes");
    }
    out.append(piece);
  };
  int64_t done = 0;
  if (from.empty()) {
    for (size_t at = 0; at < s.size(); at += code_point_length(s, at)) {
      if (count < 0 || done < count) {
        append(to);
        ++done;
      }
      append(s.substr(at, code_point_length(s, at)));
    }
    if (count < 0 || done < count) append(to);
    return out;
  }
  size_t at = 0;
  while (count < 0 || done < count) {
    const size_t hit = s.find(from, at);
    if (hit == std::string_view::npos) break;
    append(s.substr(at, hit - at));
    append(to);
    at = hit + from.size();
    ++done;
  }
  append(s.substr(at));
  return out;
}

}  // namespace llama::chat::text
