// A PCRE2 regex compiled once (UTF, Unicode properties, JIT where the
// library has it) for the Split pre-tokenizer; matching is thread-safe.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace llama::bpe {

class Regex {
 public:
  // Throws Error "<source>: <what>: PCRE2 rejects the regex at offset N: <why>".
  Regex(const std::string& pattern, const std::string& source, const std::string& what);
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;

  // Calls on_match(start, end) for each non-empty match in valid UTF-8
  // `text`, left to right, without overlap. Throws Error when PCRE2 gives up
  // (match limit) naming `offset + position`.
  void for_each_match(std::string_view text, size_t offset,
                      const std::function<void(size_t, size_t)>& on_match) const;
  bool jit() const { return jit_; }

 private:
  void* code_ = nullptr;  // pcre2_code_8
  bool jit_ = false;
  std::string source_, what_;
};

}  // namespace llama::bpe
