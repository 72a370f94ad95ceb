// UTF-8 string helpers for the template engine's string methods and filters:
// code points, whitespace as JavaScript's String#trim and Python's str.strip
// see it, ASCII case mapping.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace llama::chat::text {

// Code points without allocating (a string may be megabytes): a byte that
// does not start valid UTF-8 is one code point of its own.
// The byte length of the code point at `s[at]` (at < s.size()): 1 to 4.
size_t code_point_length(std::string_view s, size_t at);
// The byte length of the code point that ends at `end` (0 < end <= s.size(),
// `end` a code point boundary): 1 to 4.
size_t code_point_length_before(std::string_view s, size_t end);
size_t code_point_count(std::string_view s);

// Unicode White_Space (JavaScript's trim set: tab, LF, VT, FF, CR, space,
// U+00A0, U+1680, U+2000-U+200A, U+2028, U+2029, U+202F, U+205F, U+3000, U+FEFF).
// Returns the byte length of the whitespace code point at `s[at]`, or 0.
size_t whitespace_at(std::string_view s, size_t at);
// The same for the code point that ends just before `end`.
size_t whitespace_before(std::string_view s, size_t end);

std::string_view trim_left(std::string_view s);
std::string_view trim_right(std::string_view s);
std::string_view trim(std::string_view s);
// Python's str.strip(chars): strip any code point in `chars`.
std::string_view strip_chars(std::string_view s, std::string_view chars, bool left, bool right);

// ASCII letters only; other bytes are kept.
std::string to_upper(std::string_view s);
std::string to_lower(std::string_view s);
// The first character of every word upper-cased (a word: a run of ASCII
// letters, digits and '_'), the rest kept, as @huggingface/jinja's title.
std::string title(std::string_view s);
// The first character upper-cased, the rest kept.
std::string capitalize(std::string_view s);

// Every occurrence of `from` replaced by `to`, at most `count` times (< 0: all);
// an empty `from` inserts `to` between code points, as Python. Throws
// llama::Error when the result would exceed `max_bytes`.
std::string replace(std::string_view s, std::string_view from, std::string_view to, int64_t count,
                    size_t max_bytes);

}  // namespace llama::chat::text
