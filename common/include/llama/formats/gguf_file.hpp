// The GGUF container (versions 2 and 3, little-endian) read in place: header,
// metadata, tensor infos and the data section, every count, length, shape and
// offset checked against the file before anything is allocated or indexed.
// It knows no architecture: gguf_model.hpp turns a `llama` file into a Model.
// What is accepted and refused: docs/formats.md, "GGUF".
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "llama/formats/gguf_types.hpp"

namespace llama::gguf {

// Metadata value types, numbered as in the file.
enum class ValueType : uint32_t {
  u8 = 0,
  i8 = 1,
  u16 = 2,
  i16 = 3,
  u32 = 4,
  i32 = 5,
  f32 = 6,
  boolean = 7,
  string = 8,
  array = 9,
  u64 = 10,
  i64 = 11,
  f64 = 12,
};
// "u32", "string", "array", ... ("type 13" for an id outside the enum).
std::string to_string(ValueType type);

// One metadata value: a view into the file, valid while the File's storage lives.
// Scalars: `bytes` holds the value. Strings: the string's bytes (UTF-8 is not
// checked here). Arrays: `element` is the element type and `bytes` the `count`
// elements (strings: each a u64 length and its bytes). Arrays of arrays are
// refused by the reader, as llama.cpp's reader refuses them.
struct Value {
  ValueType type = ValueType::u8;
  ValueType element = ValueType::u8;  // arrays only
  uint64_t count = 1;                 // arrays: elements; else 1
  std::span<const std::byte> bytes;

  bool is_array() const { return type == ValueType::array; }
  bool is_integer() const;  // a scalar of any integer type
  // Scalar accessors; each returns nullopt when the value is not of that kind
  // (integers: any integer type whose value fits the result).
  std::optional<uint64_t> as_uint() const;
  std::optional<int64_t> as_int() const;
  std::optional<double> as_float() const;  // f32 or f64
  std::optional<bool> as_bool() const;
  std::optional<std::string_view> as_string() const;
  // Array accessors (nullopt unless an array of that element kind). These
  // allocate `count` entries, which the reader bounded by the file's size.
  std::optional<std::vector<std::string_view>> as_strings() const;
  std::optional<std::vector<float>> as_floats() const;    // f32 or f64 elements
  std::optional<std::vector<int64_t>> as_ints() const;    // any integer elements fitting int64
  std::optional<std::vector<uint64_t>> as_uints() const;  // any non-negative integer elements
};

struct KeyValue {
  std::string_view key;  // view into the file
  Value value;
};

struct Tensor {
  std::string name;
  // Row-major, outermost first: a matrix of `rows` rows of `cols` values is
  // {rows, cols}. (The file stores ggml's order, innermost first: {cols, rows}.)
  std::vector<int64_t> shape;
  uint32_t type = 0;                // TensorType id; type_layout(type) is never null
  int64_t elements = 0;             // product of the shape
  uint64_t offset = 0;              // from the start of the data section
  std::span<const std::byte> data;  // bytes of the tensor in the file
};

class File {
 public:
  // Maps `path` read-only and parses it; throws Error naming the file.
  static File open(const std::string& path);
  // Parses bytes already in memory; `storage` keeps them alive; `source` names
  // them in errors ("SOURCE: what is wrong").
  static File parse(std::span<const std::byte> bytes, const std::string& source,
                    std::shared_ptr<const void> storage);

  uint32_t version() const { return version_; }
  const std::string& source() const { return source_; }
  const std::vector<KeyValue>& metadata() const { return metadata_; }
  const std::vector<Tensor>& tensors() const { return tensors_; }
  uint64_t alignment() const { return alignment_; }
  uint64_t data_offset() const { return data_offset_; }  // from the start of the file
  uint64_t file_size() const { return file_size_; }
  const std::shared_ptr<const void>& storage() const { return storage_; }

  const Value* find(std::string_view key) const;  // nullptr when absent
  const Tensor* find_tensor(std::string_view name) const;

  // Required values: throw Error ("SOURCE: metadata key K ...") when the key is
  // missing or its value is not of that kind.
  std::string_view string(std::string_view key) const;
  uint64_t uint(std::string_view key) const;
  double number(std::string_view key) const;  // any float or integer type
  // Optional values: nullopt when absent, Error when present but of another kind.
  std::optional<std::string_view> optional_string(std::string_view key) const;
  std::optional<uint64_t> optional_uint(std::string_view key) const;
  std::optional<double> optional_number(std::string_view key) const;
  std::optional<bool> optional_bool(std::string_view key) const;

  static constexpr uint32_t kMagic = 0x46554747;  // "GGUF" read as a little-endian u32
  static constexpr uint64_t kDefaultAlignment = 32;
  // No real file comes near these (a 405B llama: ~1,100 tensors, ~40 keys);
  // they bound the memory a hostile header can make the reader spend.
  static constexpr uint64_t kMaxTensors = 1u << 16;
  static constexpr uint64_t kMaxMetadata = 1u << 16;
  static constexpr uint32_t kMaxDims = 4;       // GGML_MAX_DIMS
  static constexpr size_t kMaxTensorName = 63;  // llama.cpp: names shorter than 64

 private:
  friend class Parser;
  [[noreturn]] void fail_key(std::string_view key, const std::string& why) const;

  std::string source_;
  uint32_t version_ = 0;
  std::vector<KeyValue> metadata_;
  std::vector<Tensor> tensors_;
  std::unordered_map<std::string_view, size_t> key_index_;
  std::unordered_map<std::string, size_t> tensor_index_;
  uint64_t alignment_ = kDefaultAlignment;
  uint64_t data_offset_ = 0;
  uint64_t file_size_ = 0;
  std::shared_ptr<const void> storage_;
};

// `text` quoted for a one-line message: control and non-ASCII bytes as \xNN,
// cut after 80 bytes.
std::string quoted(std::string_view text);

}  // namespace llama::gguf
