// UTF-8 helpers: code point boundaries, Unicode whitespace, ASCII case.
#include "text.hpp"

#include "llama/error.hpp"

namespace llama::chat::text {
namespace {

// Length of the valid UTF-8 sequence starting at s[at], or 0.
size_t utf8_length(std::string_view s, size_t at) {
  const auto b = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char c = b(at);
  size_t n = 0;
  uint32_t cp = 0;
  if (c < 0x80) return 1;
  if ((c & 0xE0) == 0xC0) {
    n = 2;
    cp = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    n = 3;
    cp = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    n = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (at + n > s.size()) return 0;
  for (size_t i = 1; i < n; ++i) {
    if ((b(at + i) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b(at + i) & 0x3F);
  }
  const uint32_t min = n == 2 ? 0x80 : n == 3 ? 0x800 : 0x10000;
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

bool is_space_code_point(uint32_t cp) {
  return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0xA0 || cp == 0x1680 ||
         (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F ||
         cp == 0x205F || cp == 0x3000 || cp == 0xFEFF;
}

uint32_t decode(std::string_view s, size_t at, size_t n) {
  const auto c = static_cast<unsigned char>(s[at]);
  if (n == 1) return c;
  uint32_t cp = c & (n == 2 ? 0x1F : n == 3 ? 0x0F : 0x07);
  for (size_t i = 1; i < n; ++i) cp = (cp << 6) | (static_cast<unsigned char>(s[at + i]) & 0x3F);
  return cp;
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
  return is_space_code_point(decode(s, at, n)) ? n : 0;
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
