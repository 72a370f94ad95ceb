// GPT-2's bytes_to_unicode table and its inverse.
#include "byte_level.hpp"

#include "utf8.hpp"

namespace llama::bpe {

ByteLevelMap::ByteLevelMap() {
  byte_of_cp_.fill(-1);
  uint32_t next = 256;
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
    const uint32_t cp = printable ? static_cast<uint32_t>(b) : next++;
    append_code_point(chars_[static_cast<size_t>(b)], cp);
    byte_of_cp_[cp] = static_cast<int16_t>(b);
  }
}

void ByteLevelMap::map(std::string_view bytes, std::string& out) const {
  for (unsigned char b : bytes) out.append(chars_[b]);
}

bool ByteLevelMap::unmap(std::string_view text, std::string& out) const {
  std::string bytes;
  for (size_t i = 0; i < text.size();) {
    const auto c0 = static_cast<unsigned char>(text[i]);
    uint32_t cp = 0;
    size_t n = 1;
    if (c0 < 0x80) {
      cp = c0;
    } else if ((c0 & 0xE0) == 0xC0 && i + 1 < text.size() &&
               (static_cast<unsigned char>(text[i + 1]) & 0xC0) == 0x80) {
      cp = ((c0 & 0x1Fu) << 6) | (static_cast<unsigned char>(text[i + 1]) & 0x3Fu);
      n = 2;
    } else {
      return false;  // every mapped character is below U+0800
    }
    if (cp >= byte_of_cp_.size() || byte_of_cp_[cp] < 0) return false;
    bytes += static_cast<char>(byte_of_cp_[cp]);
    i += n;
  }
  out += bytes;
  return true;
}

const ByteLevelMap& byte_level_map() {
  static const ByteLevelMap map;
  return map;
}

}  // namespace llama::bpe
