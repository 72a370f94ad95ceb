// GPT-2's byte-to-unicode mapping (the ByteLevel pre-tokenizer and decoder):
// printable bytes stand for themselves, the other 68 for code points 256 and up.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace llama::bpe {

class ByteLevelMap {
 public:
  ByteLevelMap();
  // The UTF-8 text standing for byte b.
  std::string_view char_of(unsigned char b) const { return chars_[b]; }
  // Appends the mapped text of `bytes`.
  void map(std::string_view bytes, std::string& out) const;
  // The bytes a mapped text stands for; false (out unchanged) when some
  // character is not in the mapping.
  bool unmap(std::string_view text, std::string& out) const;

 private:
  std::array<std::string, 256> chars_;
  std::array<int16_t, 324> byte_of_cp_;  // code point -> byte, -1 none (code points < 324)
};

const ByteLevelMap& byte_level_map();

}  // namespace llama::bpe
