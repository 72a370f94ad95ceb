// Writes GGUF version 3 files: metadata of any value type, then tensor infos,
// then each tensor's bytes at an aligned offset, as llama.cpp's gguf writer lays
// them out (tensors in the order added, each padded to the alignment).
// Tensor bytes are produced one tensor at a time while writing, so a converter
// holds at most one tensor's output in memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "llama/formats/gguf_file.hpp"

namespace llama::gguf {

class Writer {
 public:
  // Scalars and strings.
  void set_u32(std::string key, uint32_t v);
  void set_i32(std::string key, int32_t v);
  void set_u64(std::string key, uint64_t v);
  void set_f32(std::string key, float v);
  void set_bool(std::string key, bool v);
  void set_string(std::string key, std::string_view v);
  // Arrays.
  void set_strings(std::string key, const std::vector<std::string>& v);
  void set_f32s(std::string key, const std::vector<float>& v);
  void set_i32s(std::string key, const std::vector<int32_t>& v);
  // Any value already encoded as the file stores it after the type field
  // (arrays: element type, count, elements); for tests and copies.
  void set_encoded(std::string key, ValueType type, std::vector<std::byte> encoded);

  // A tensor of row-major `shape` (outermost first) and `type`; `produce` is
  // called once, while writing, and must return exactly the tensor's bytes.
  using Producer = std::function<std::vector<std::byte>()>;
  void add_tensor(std::string name, std::vector<int64_t> shape, TensorType type, Producer produce);

  // Bytes a tensor of `shape` and `type` occupies; throws Error (naming `name`)
  // unless its rows hold whole blocks.
  static int64_t tensor_bytes(const std::string& name, const std::vector<int64_t>& shape,
                              TensorType type);

  // Writes the file; sets general.alignment when `alignment` is not the
  // default 32. Throws Error naming `destination` when the stream fails or a
  // producer returns the wrong number of bytes. Returns the bytes written.
  int64_t write(std::ostream& out, const std::string& destination, uint32_t alignment = 32);

 private:
  struct Entry {
    std::string key;
    ValueType type;
    std::vector<std::byte> encoded;
  };
  struct PendingTensor {
    std::string name;
    std::vector<int64_t> shape;
    TensorType type;
    int64_t bytes;
    Producer produce;
  };
  void set(std::string key, ValueType type, std::vector<std::byte> encoded);
  std::vector<Entry> entries_;
  std::vector<PendingTensor> tensors_;
};

}  // namespace llama::gguf
