// A PCRE2 regex compiled once (UTF, Unicode properties, JIT where the
// library has it) for the Split pre-tokenizer; matching is thread-safe and
// its work is charged to the encode's budget (limits.hpp), so a pattern that
// backtracks or rescans without end is refused instead of running for hours.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "limits.hpp"

namespace llama::bpe {

class Regex {
 public:
  // Throws Error "<source>: <what>: PCRE2 rejects the regex at offset N: <why>",
  // or naming the limit when a lookbehind reads back more than kMaxLookbehind.
  Regex(const std::string& pattern, const std::string& source, const std::string& what);
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;

  // Calls on_match(start, end) for each non-empty match in valid UTF-8
  // `text`, left to right, without overlap (PCRE2's own search order).
  // Throws Error naming `offset + position` when one position needs more than
  // PCRE2's match limit, or the work would pass what `budget` has left
  // (regex.cpp says how it is counted).
  void for_each_match(std::string_view text, size_t offset, Budget& budget,
                      const std::function<void(size_t, size_t)>& on_match) const;
  bool jit() const { return jit_; }  // some of the pattern's codes run as JIT code

 private:
  friend class RegexSearch;
  void* search_ = nullptr;    // pcre2_code_8: finds the leftmost match
  void* anchored_ = nullptr;  // the same pattern anchored: one start position per call
  void* timed_ = nullptr;     // anchored, with callouts that watch the clock
  uint32_t lookbehind_bytes_ = 0;
  bool jit_ = false;
  std::string source_, what_;
};

}  // namespace llama::bpe
