// UTF-8 validation and the incremental lossy decoder (see utf8.hpp).
#include "utf8.hpp"

namespace llama::bpe {
namespace {

bool is_cont(unsigned char c) { return (c & 0xC0) == 0x80; }

// The expected length of a character led by `c` (0: not a lead byte) and the
// allowed range of its second byte (excludes overlongs, surrogates, > U+10FFFF).
struct Lead {
  size_t length;
  unsigned char lo, hi;
};
Lead lead_of(unsigned char c) {
  if (c < 0x80) return {1, 0, 0};
  if (c >= 0xC2 && c <= 0xDF) return {2, 0x80, 0xBF};
  if (c == 0xE0) return {3, 0xA0, 0xBF};
  if (c >= 0xE1 && c <= 0xEC) return {3, 0x80, 0xBF};
  if (c == 0xED) return {3, 0x80, 0x9F};
  if (c >= 0xEE && c <= 0xEF) return {3, 0x80, 0xBF};
  if (c == 0xF0) return {4, 0x90, 0xBF};
  if (c >= 0xF1 && c <= 0xF3) return {4, 0x80, 0xBF};
  if (c == 0xF4) return {4, 0x80, 0x8F};
  return {0, 0, 0};
}

// How many bytes from s[i] match a valid character's pattern (stops at the
// first mismatch or the end); `lead.length` when complete.
size_t matched(std::string_view s, size_t i, const Lead& lead) {
  if (lead.length == 0) return 0;
  size_t n = 1;
  while (n < lead.length && i + n < s.size()) {
    const auto c = static_cast<unsigned char>(s[i + n]);
    const bool ok = n == 1 ? (c >= lead.lo && c <= lead.hi) : is_cont(c);
    if (!ok) break;
    ++n;
  }
  return n;
}

}  // namespace

size_t valid_char_length(std::string_view s, size_t i) {
  const Lead lead = lead_of(static_cast<unsigned char>(s[i]));
  return matched(s, i, lead) == lead.length ? lead.length : 0;
}

size_t invalid_prefix_length(std::string_view s, size_t i) {
  const Lead lead = lead_of(static_cast<unsigned char>(s[i]));
  const size_t n = matched(s, i, lead);
  return n == 0 ? 1 : n;
}

bool incomplete_char(std::string_view s, size_t i) {
  const Lead lead = lead_of(static_cast<unsigned char>(s[i]));
  const size_t n = matched(s, i, lead);
  return lead.length > 1 && n < lead.length && i + n == s.size();
}

bool is_valid_utf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    const size_t n = valid_char_length(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

void append_code_point(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

std::string Utf8Stream::push(std::string_view bytes) {
  held_.append(bytes);
  std::string out;
  const std::string_view s = held_;
  size_t i = 0;
  while (i < s.size()) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      out += s[i++];
      continue;
    }
    const size_t n = valid_char_length(s, i);
    if (n > 0) {
      out.append(s.substr(i, n));
      i += n;
    } else if (incomplete_char(s, i)) {
      break;  // wait for the rest
    } else {
      out.append(kReplacementChar);
      i += invalid_prefix_length(s, i);
    }
  }
  held_.erase(0, i);
  return out;
}

std::string Utf8Stream::finish() {
  std::string out = held_.empty() ? std::string() : std::string(kReplacementChar);
  held_.clear();
  return out;
}

}  // namespace llama::bpe
