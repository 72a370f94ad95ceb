// Hand-built GGUF bytes for the container tests: every field written as told,
// so a test can state any count, length, type or offset, hostile ones included.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace llama::test {

class GgufBytes {
 public:
  // Magic, version and both counts as given.
  GgufBytes(uint64_t n_tensors, uint64_t n_kv, uint32_t version = 3) {
    u32(0x46554747);
    u32(version);
    u64(n_tensors);
    u64(n_kv);
  }
  GgufBytes& u8(uint8_t v) { return raw(v); }
  GgufBytes& u32(uint32_t v) { return raw(v); }
  GgufBytes& u64(uint64_t v) { return raw(v); }
  GgufBytes& f32(float v) { return raw(v); }
  GgufBytes& str(std::string_view s) {
    u64(s.size());
    return text(s);
  }
  GgufBytes& text(std::string_view s) {
    for (char c : s) bytes.push_back(static_cast<std::byte>(c));
    return *this;
  }
  // A key and its value type (the value follows).
  GgufBytes& key(std::string_view k, uint32_t type) { return str(k).u32(type); }
  GgufBytes& kv_u32(std::string_view k, uint32_t v) { return key(k, 4).u32(v); }
  GgufBytes& kv_str(std::string_view k, std::string_view v) { return key(k, 8).str(v); }
  // A tensor info; `ne` in the file's order (innermost first).
  GgufBytes& tensor(std::string_view name, const std::vector<uint64_t>& ne, uint32_t type,
                    uint64_t offset) {
    str(name).u32(static_cast<uint32_t>(ne.size()));
    for (uint64_t d : ne) u64(d);
    return u32(type).u64(offset);
  }
  // Zero bytes up to a multiple of `alignment`, then `n` bytes of data.
  GgufBytes& data(size_t n, size_t alignment = 32) {
    bytes.resize(bytes.size() + (alignment - bytes.size() % alignment) % alignment);
    bytes.resize(bytes.size() + n, std::byte{0x3c});  // 0x3c3c: f16 1.06
    return *this;
  }

  std::vector<std::byte> bytes;

 private:
  template <typename T>
  GgufBytes& raw(const T& v) {
    const size_t at = bytes.size();
    bytes.resize(at + sizeof v);
    std::memcpy(bytes.data() + at, &v, sizeof v);
    return *this;
  }
};

}  // namespace llama::test
