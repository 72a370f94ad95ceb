// UTF-8 helpers for the BPE pipeline: code point lengths, validation,
// decoding and encoding, and an incremental lossy decoder (invalid bytes ->
// U+FFFD per maximal invalid subpart, as Rust's String::from_utf8_lossy and
// WHATWG's TextDecoder). The Jinja engine (chat/, the same layer) uses the
// validator, the decoder and the encoder too rather than keep its own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace llama::bpe {

inline constexpr std::string_view kReplacementChar = "\xEF\xBF\xBD";  // U+FFFD

// Length of the valid UTF-8 character at s[i], or 0 when the bytes there are
// not one (a bad lead, a bad or missing continuation, overlong, surrogate,
// above U+10FFFF).
size_t valid_char_length(std::string_view s, size_t i);

// How many bytes at s[i] form the maximal prefix of a valid character
// (>= 1): what one U+FFFD replaces when valid_char_length is 0.
size_t invalid_prefix_length(std::string_view s, size_t i);

// True when the bytes at s[i..] could still become a valid character with
// more bytes appended (a valid lead and continuations so far, too few).
bool incomplete_char(std::string_view s, size_t i);

bool is_valid_utf8(std::string_view s);

// The code point of the n-byte character at s[i], n its valid_char_length
// (not 0). Inline: callers decode inside their scanning loops.
inline uint32_t decode_char(std::string_view s, size_t i, size_t n) {
  const auto c = static_cast<unsigned char>(s[i]);
  if (n == 1) return c;
  uint32_t cp = c & (0x7Fu >> n);  // the lead's payload bits
  for (size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3Fu);
  return cp;
}

// Appends the UTF-8 encoding of code point `cp` (< 0x110000, no surrogates).
void append_code_point(std::string& out, uint32_t cp);

// Feeds bytes in, returns whole characters (invalid ones as U+FFFD); keeps an
// incomplete trailing character until more bytes come or finish().
class Utf8Stream {
 public:
  std::string push(std::string_view bytes);
  std::string finish();  // a held incomplete character becomes one U+FFFD

 private:
  std::string held_;
};

}  // namespace llama::bpe
