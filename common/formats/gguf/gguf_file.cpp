// GGUF parsing: a cursor that refuses to read past the end, and the header,
// metadata and tensor-info walk. Every count is checked against the bytes that
// could hold it before a vector is reserved, so a hostile header costs at most
// a pass over the file (time and memory linear in its size, capped by kMax*).
#include <algorithm>
#include <cstring>

#include "llama/checked_math.hpp"
#include "llama/error.hpp"
#include "llama/formats/gguf_file.hpp"
#include "llama/mapped_file.hpp"

namespace llama::gguf {

// Reads consecutive little-endian fields; `what` names the field in errors.
class Parser {
 public:
  Parser(std::span<const std::byte> bytes, const std::string& source)
      : bytes_(bytes), source_(source) {}

  File parse(std::shared_ptr<const void> storage);

 private:
  [[noreturn]] void fail(const std::string& why) const { throw Error(source_ + ": " + why); }
  uint64_t remaining() const { return bytes_.size() - pos_; }
  void need(uint64_t n, const std::string& what) const {
    if (n > remaining()) {
      fail("truncated GGUF file: " + what + " at offset " + std::to_string(pos_) + " needs " +
           std::to_string(n) + " bytes, " + std::to_string(remaining()) + " remain");
    }
  }
  template <typename T>
  T scalar(const std::string& what) {
    need(sizeof(T), what);
    T v;
    std::memcpy(&v, bytes_.data() + pos_, sizeof v);
    pos_ += sizeof v;
    return v;
  }
  std::span<const std::byte> take(uint64_t n, const std::string& what) {
    need(n, what);
    auto s = bytes_.subspan(pos_, n);
    pos_ += n;
    return s;
  }
  std::string_view string(const std::string& what) {
    const uint64_t n = scalar<uint64_t>(what + "'s length");
    if (n > remaining()) {
      fail(what + " at offset " + std::to_string(pos_ - 8) + " claims " + std::to_string(n) +
           " bytes, past the end of the file (" + std::to_string(remaining()) + " remain)");
    }
    auto s = take(n, what);
    return {reinterpret_cast<const char*>(s.data()), s.size()};
  }
  ValueType value_type(const std::string& what);
  Value value(const std::string& what);
  void header();
  void metadata();
  void tensor_infos();
  void data_section();

  std::span<const std::byte> bytes_;
  const std::string& source_;
  uint64_t pos_ = 0;
  File f_;
  uint64_t n_tensors_ = 0;
  uint64_t n_kv_ = 0;
};

namespace {

// Bytes of one scalar of `t`, 0 for string and array.
uint64_t scalar_bytes(ValueType t) {
  switch (t) {
    case ValueType::u8:
    case ValueType::i8:
    case ValueType::boolean:
      return 1;
    case ValueType::u16:
    case ValueType::i16:
      return 2;
    case ValueType::u32:
    case ValueType::i32:
    case ValueType::f32:
      return 4;
    case ValueType::u64:
    case ValueType::i64:
    case ValueType::f64:
      return 8;
    default:
      return 0;
  }
}

bool known(uint32_t t) { return t <= static_cast<uint32_t>(ValueType::f64); }

// The smallest encodings: a key (u64 length, empty) with a type and a u8 value;
// a tensor info with an empty name, no dims, a type and an offset.
constexpr uint64_t kMinKvBytes = 8 + 4 + 1;
constexpr uint64_t kMinTensorInfoBytes = 8 + 4 + 4 + 8;

}  // namespace

ValueType Parser::value_type(const std::string& what) {
  const uint64_t at = pos_;
  const auto t = scalar<uint32_t>(what + "'s type");
  if (!known(t)) {
    fail(what + " has unknown value type " + std::to_string(t) + " (at offset " +
         std::to_string(at) + "; GGUF defines 0..12)");
  }
  return static_cast<ValueType>(t);
}

Value Parser::value(const std::string& what) {
  Value v;
  v.type = value_type(what);
  if (v.type == ValueType::string) {
    const std::string_view s = string(what);
    v.bytes = {reinterpret_cast<const std::byte*>(s.data()), s.size()};
    return v;
  }
  if (v.type != ValueType::array) {
    v.bytes = take(scalar_bytes(v.type), what);
    if (v.type == ValueType::boolean && static_cast<uint8_t>(v.bytes[0]) > 1) {
      fail(what + " is a bool of value " + std::to_string(static_cast<int>(v.bytes[0])) +
           " (GGUF allows 0 and 1)");
    }
    return v;
  }
  v.element = value_type(what + "'s element");
  if (v.element == ValueType::array) {
    fail(what + " is an array of arrays, which this reader (like llama.cpp's) refuses");
  }
  const uint64_t count_at = pos_;
  v.count = scalar<uint64_t>(what + "'s element count");
  const uint64_t start = pos_;
  // Strings take at least their 8-byte length each.
  const uint64_t min_bytes = v.element == ValueType::string ? 8 : scalar_bytes(v.element);
  if (v.count > remaining() / min_bytes) {
    fail(what + " claims " + std::to_string(v.count) + " elements (count at offset " +
         std::to_string(count_at) + "), more than the " + std::to_string(remaining()) +
         " remaining bytes can hold");
  }
  if (v.element == ValueType::string) {
    for (uint64_t i = 0; i < v.count; ++i) (void)string(what + "[" + std::to_string(i) + "]");
  } else {
    (void)take(v.count * min_bytes, what);
    if (v.element == ValueType::boolean) {
      for (uint64_t i = 0; i < v.count; ++i) {
        if (static_cast<uint8_t>(bytes_[start + i]) > 1) {
          fail(what + "[" + std::to_string(i) + "] is a bool of value " +
               std::to_string(static_cast<int>(bytes_[start + i])) + " (GGUF allows 0 and 1)");
        }
      }
    }
  }
  v.bytes = bytes_.subspan(start, pos_ - start);
  return v;
}

void Parser::header() {
  if (bytes_.size() < 4) fail("truncated GGUF file: " + std::to_string(bytes_.size()) + " bytes");
  const auto magic = scalar<uint32_t>("magic");
  if (magic != File::kMagic) fail("not a GGUF file (no \"GGUF\" magic at offset 0)");
  const auto version = scalar<uint32_t>("header: version");
  if (version == 1) {
    fail(
        "GGUF version 1 is not supported (its 32-bit counts were replaced in version 2; "
        "llama.cpp no longer reads it either)");
  }
  if (version != 2 && version != 3) {
    const uint32_t swapped = __builtin_bswap32(version);
    if (swapped == 2 || swapped == 3) {
      fail("big-endian GGUF file (version " + std::to_string(swapped) +
           "); only little-endian files are supported");
    }
    fail("unsupported GGUF version " + std::to_string(version) + " (2 and 3 are supported)");
  }
  f_.version_ = version;
  n_tensors_ = scalar<uint64_t>("header: tensor count");
  n_kv_ = scalar<uint64_t>("header: metadata count");
  // Refuse counts the rest of the file cannot hold before reserving anything.
  const uint64_t rest = remaining();
  if (n_kv_ > rest / kMinKvBytes || n_tensors_ > rest / kMinTensorInfoBytes ||
      n_kv_ * kMinKvBytes > rest - n_tensors_ * kMinTensorInfoBytes) {
    fail("GGUF header claims " + std::to_string(n_tensors_) + " tensors and " +
         std::to_string(n_kv_) + " metadata entries, more than the remaining " +
         std::to_string(rest) + " bytes can hold");
  }
  if (n_tensors_ > File::kMaxTensors) {
    fail("GGUF header claims " + std::to_string(n_tensors_) + " tensors, more than this reader " +
         "accepts (" + std::to_string(File::kMaxTensors) + ")");
  }
  if (n_kv_ > File::kMaxMetadata) {
    fail("GGUF header claims " + std::to_string(n_kv_) + " metadata entries, more than this " +
         "reader accepts (" + std::to_string(File::kMaxMetadata) + ")");
  }
}

void Parser::metadata() {
  f_.metadata_.reserve(n_kv_);
  f_.key_index_.reserve(n_kv_);
  for (uint64_t i = 0; i < n_kv_; ++i) {
    const uint64_t at = pos_;
    const std::string_view key = string("metadata key " + std::to_string(i));
    const std::string what = "metadata key " + quoted(key);
    if (f_.key_index_.count(key) != 0) {
      fail("duplicate " + what + " (entries " + std::to_string(f_.key_index_[key]) + " and " +
           std::to_string(i) + ", at offset " + std::to_string(at) + ")");
    }
    f_.key_index_.emplace(key, f_.metadata_.size());
    f_.metadata_.push_back({key, value(what)});
  }
  if (const Value* a = f_.find("general.alignment")) {
    if (a->type != ValueType::u32) {
      fail("metadata key \"general.alignment\" is a " + to_string(a->type) +
           ", the format requires u32");
    }
    const uint64_t n = *a->as_uint();
    if (n == 0 || (n & (n - 1)) != 0) {
      fail("general.alignment " + std::to_string(n) + " is not a power of two");
    }
    f_.alignment_ = n;
  }
}

void Parser::tensor_infos() {
  f_.tensors_.reserve(n_tensors_);
  f_.tensor_index_.reserve(n_tensors_);
  for (uint64_t i = 0; i < n_tensors_; ++i) {
    Tensor t;
    const std::string_view name = string("tensor info " + std::to_string(i) + ": name");
    t.name = std::string(name);
    const std::string what = "tensor " + quoted(name);
    if (name.size() > File::kMaxTensorName) {
      fail(what + ": name of " + std::to_string(name.size()) + " bytes (at most " +
           std::to_string(File::kMaxTensorName) + ")");
    }
    if (auto it = f_.tensor_index_.find(t.name); it != f_.tensor_index_.end()) {
      fail("two tensors named " + quoted(name) + " (tensor infos " + std::to_string(it->second) +
           " and " + std::to_string(i) + ")");
    }
    const auto n_dims = scalar<uint32_t>(what + ": dimension count");
    if (n_dims > File::kMaxDims) {
      fail(what + " has " + std::to_string(n_dims) + " dimensions (at most " +
           std::to_string(File::kMaxDims) + ")");
    }
    t.shape.resize(n_dims);
    // The product of the non-zero dimensions must fit, so that any partial
    // product (rows x cols, in any order) fits too, even when a zero makes the total 0.
    int64_t nonzero = 1;
    bool zero = false;
    for (uint32_t d = 0; d < n_dims; ++d) {
      const auto ne = scalar<uint64_t>(what + ": dimension " + std::to_string(d));
      zero = zero || ne == 0;
      if (ne > static_cast<uint64_t>(INT64_MAX) ||
          __builtin_mul_overflow(nonzero, std::max<int64_t>(static_cast<int64_t>(ne), 1),
                                 &nonzero)) {
        fail(what + ": dimensions multiply past 2^63 (dimension " + std::to_string(d) + " is " +
             std::to_string(ne) + ")");
      }
      t.shape[n_dims - 1 - d] = static_cast<int64_t>(ne);  // ggml's ne0 is the innermost
    }
    t.elements = zero ? 0 : nonzero;
    t.type = scalar<uint32_t>(what + ": type");
    const TypeLayout* layout = type_layout(t.type);
    if (layout == nullptr) fail(what + " has " + type_name(t.type));
    const int64_t row = n_dims == 0 ? 1 : t.shape.back();
    if (row % layout->block_values != 0) {
      fail(what + " of type " + layout->name + " has rows of " + std::to_string(row) +
           " values, not a multiple of its block of " + std::to_string(layout->block_values));
    }
    t.offset = scalar<uint64_t>(what + ": offset");
    f_.tensor_index_.emplace(t.name, f_.tensors_.size());
    f_.tensors_.push_back(std::move(t));
  }
}

void Parser::data_section() {
  const uint64_t align = f_.alignment_;
  // Padding to the alignment (header end <= file size, so no overflow).
  const uint64_t data = pos_ + (align - pos_ % align) % align;
  f_.data_offset_ = data;
  const uint64_t data_size = data <= bytes_.size() ? bytes_.size() - data : 0;
  std::vector<size_t> order(f_.tensors_.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  for (Tensor& t : f_.tensors_) {
    const std::string what = "tensor " + quoted(t.name);
    const TypeLayout* layout = type_layout(t.type);
    const int64_t bytes = checked_mul(t.elements / layout->block_values, layout->block_bytes,
                                      source_ + ": " + what + ": byte size");
    if (t.offset % align != 0) {
      fail(what + ": offset " + std::to_string(t.offset) + " is not a multiple of the alignment " +
           std::to_string(align));
    }
    const auto size = static_cast<uint64_t>(bytes);
    if (t.offset > data_size || size > data_size - t.offset) {
      fail(what + ": bytes " + std::to_string(t.offset) + " + " + std::to_string(size) +
           " fall outside the data section of " + std::to_string(data_size) + " bytes (at offset " +
           std::to_string(data) + ")");
    }
    t.data = bytes_.subspan(data + t.offset, size);
  }
  // Overlapping tensors are a corrupt file (no writer shares bytes between tensors).
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return f_.tensors_[a].offset < f_.tensors_[b].offset; });
  for (size_t i = 1; i < order.size(); ++i) {
    const Tensor& prev = f_.tensors_[order[i - 1]];
    const Tensor& t = f_.tensors_[order[i]];
    if (t.offset < prev.offset + prev.data.size()) {
      fail("tensors " + quoted(prev.name) + " and " + quoted(t.name) + " overlap (offsets " +
           std::to_string(prev.offset) + " + " + std::to_string(prev.data.size()) + " and " +
           std::to_string(t.offset) + ")");
    }
  }
}

File Parser::parse(std::shared_ptr<const void> storage) {
  f_.source_ = source_;
  f_.file_size_ = bytes_.size();
  header();
  metadata();
  tensor_infos();
  data_section();
  f_.storage_ = std::move(storage);
  return std::move(f_);
}

File File::open(const std::string& path) {
  auto file = std::make_shared<MappedFile>(path);
  return parse(file->bytes(), path, file);
}

File File::parse(std::span<const std::byte> bytes, const std::string& source,
                 std::shared_ptr<const void> storage) {
  return Parser(bytes, source).parse(std::move(storage));
}

}  // namespace llama::gguf
