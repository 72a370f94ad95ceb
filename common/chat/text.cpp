// UTF-8 helpers: code point boundaries, Unicode whitespace, ASCII case.
#include "text.hpp"

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

std::vector<size_t> code_point_offsets(std::string_view s) {
  std::vector<size_t> offsets;
  size_t at = 0;
  while (at < s.size()) {
    offsets.push_back(at);
    const size_t n = utf8_length(s, at);
    at += n == 0 ? 1 : n;
  }
  offsets.push_back(s.size());
  return offsets;
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
  const std::vector<size_t> set = code_point_offsets(chars);
  const auto in_set = [&](std::string_view cp) {
    for (size_t i = 0; i + 1 < set.size(); ++i) {
      if (chars.substr(set[i], set[i + 1] - set[i]) == cp) return true;
    }
    return false;
  };
  const std::vector<size_t> cps = code_point_offsets(s);
  size_t first = 0, last = cps.size() - 1;  // code point indices [first, last)
  while (left && first < last && in_set(s.substr(cps[first], cps[first + 1] - cps[first]))) ++first;
  while (right && last > first && in_set(s.substr(cps[last - 1], cps[last] - cps[last - 1])))
    --last;
  return s.substr(cps[first], cps[last] - cps[first]);
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
    const std::vector<size_t> cps = code_point_offsets(s);
    for (size_t i = 0; i + 1 < cps.size(); ++i) {
      if (count < 0 || done < count) {
        append(to);
        ++done;
      }
      append(s.substr(cps[i], cps[i + 1] - cps[i]));
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
