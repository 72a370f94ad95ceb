// GGUF metadata values: typed reads of the views the parser validated, and the
// File's key look-ups with errors that name the file and the key.
#include <cstring>

#include "llama/error.hpp"
#include "llama/formats/gguf_file.hpp"

namespace llama::gguf {
namespace {

template <typename T>
T load(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

bool integer_type(ValueType t) {
  switch (t) {
    case ValueType::u8:
    case ValueType::i8:
    case ValueType::u16:
    case ValueType::i16:
    case ValueType::u32:
    case ValueType::i32:
    case ValueType::u64:
    case ValueType::i64:
      return true;
    default:
      return false;
  }
}

size_t integer_bytes(ValueType t) {
  switch (t) {
    case ValueType::u8:
    case ValueType::i8:
      return 1;
    case ValueType::u16:
    case ValueType::i16:
      return 2;
    case ValueType::u32:
    case ValueType::i32:
      return 4;
    default:
      return 8;
  }
}

// The integer at `p` of type `t`, as a sign and magnitude in 128 bits.
__int128 integer_at(ValueType t, const std::byte* p) {
  switch (t) {
    case ValueType::u8:
      return load<uint8_t>(p);
    case ValueType::i8:
      return load<int8_t>(p);
    case ValueType::u16:
      return load<uint16_t>(p);
    case ValueType::i16:
      return load<int16_t>(p);
    case ValueType::u32:
      return load<uint32_t>(p);
    case ValueType::i32:
      return load<int32_t>(p);
    case ValueType::u64:
      return load<uint64_t>(p);
    default:
      return load<int64_t>(p);
  }
}

}  // namespace

std::string to_string(ValueType type) {
  static const char* const names[] = {"u8",   "i8",     "u16",   "i16", "u32", "i32", "f32",
                                      "bool", "string", "array", "u64", "i64", "f64"};
  const auto i = static_cast<uint32_t>(type);
  return i < std::size(names) ? names[i] : "type " + std::to_string(i);
}

bool Value::is_integer() const { return integer_type(type); }

std::optional<uint64_t> Value::as_uint() const {
  if (!is_integer()) return std::nullopt;
  const __int128 v = integer_at(type, bytes.data());
  if (v < 0) return std::nullopt;
  return static_cast<uint64_t>(v);
}

std::optional<int64_t> Value::as_int() const {
  if (!is_integer()) return std::nullopt;
  const __int128 v = integer_at(type, bytes.data());
  if (v > INT64_MAX) return std::nullopt;
  return static_cast<int64_t>(v);
}

std::optional<double> Value::as_float() const {
  if (type == ValueType::f32) return load<float>(bytes.data());
  if (type == ValueType::f64) return load<double>(bytes.data());
  return std::nullopt;
}

std::optional<bool> Value::as_bool() const {
  if (type != ValueType::boolean) return std::nullopt;
  return bytes[0] != std::byte{0};
}

std::optional<std::string_view> Value::as_string() const {
  if (type != ValueType::string) return std::nullopt;
  return std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

std::optional<std::vector<std::string_view>> Value::as_strings() const {
  if (!is_array() || element != ValueType::string) return std::nullopt;
  std::vector<std::string_view> out;
  out.reserve(count);
  size_t at = 0;  // the parser checked every length against these bytes
  for (uint64_t i = 0; i < count; ++i) {
    const auto n = load<uint64_t>(bytes.data() + at);
    out.emplace_back(reinterpret_cast<const char*>(bytes.data() + at + 8), n);
    at += 8 + n;
  }
  return out;
}

std::optional<std::vector<float>> Value::as_floats() const {
  if (!is_array() || (element != ValueType::f32 && element != ValueType::f64)) return std::nullopt;
  std::vector<float> out(count);
  for (uint64_t i = 0; i < count; ++i) {
    out[i] = element == ValueType::f32 ? load<float>(bytes.data() + 4 * i)
                                       : static_cast<float>(load<double>(bytes.data() + 8 * i));
  }
  return out;
}

std::optional<std::vector<int64_t>> Value::as_ints() const {
  if (!is_array() || !integer_type(element)) return std::nullopt;
  const size_t w = integer_bytes(element);
  std::vector<int64_t> out(count);
  for (uint64_t i = 0; i < count; ++i) {
    const __int128 v = integer_at(element, bytes.data() + w * i);
    if (v > INT64_MAX) return std::nullopt;
    out[i] = static_cast<int64_t>(v);
  }
  return out;
}

std::optional<std::vector<uint64_t>> Value::as_uints() const {
  if (!is_array() || !integer_type(element)) return std::nullopt;
  const size_t w = integer_bytes(element);
  std::vector<uint64_t> out(count);
  for (uint64_t i = 0; i < count; ++i) {
    const __int128 v = integer_at(element, bytes.data() + w * i);
    if (v < 0) return std::nullopt;
    out[i] = static_cast<uint64_t>(v);
  }
  return out;
}

const Value* File::find(std::string_view key) const {
  auto it = key_index_.find(key);
  return it == key_index_.end() ? nullptr : &metadata_[it->second].value;
}

const Tensor* File::find_tensor(std::string_view name) const {
  auto it = tensor_index_.find(std::string(name));
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

void File::fail_key(std::string_view key, const std::string& why) const {
  throw Error(source_ + ": metadata key " + quoted(key) + " " + why);
}

namespace {
std::string describe(const Value& v) {
  return v.is_array() ? "an array of " + to_string(v.element) : "a " + to_string(v.type);
}
}  // namespace

std::optional<std::string_view> File::optional_string(std::string_view key) const {
  const Value* v = find(key);
  if (v == nullptr) return std::nullopt;
  if (auto s = v->as_string()) return s;
  fail_key(key, "is " + describe(*v) + ", expected a string");
}

std::optional<uint64_t> File::optional_uint(std::string_view key) const {
  const Value* v = find(key);
  if (v == nullptr) return std::nullopt;
  if (auto u = v->as_uint()) return u;
  if (v->is_integer()) fail_key(key, "is negative (" + std::to_string(*v->as_int()) + ")");
  fail_key(key, "is " + describe(*v) + ", expected an unsigned integer");
}

std::optional<double> File::optional_number(std::string_view key) const {
  const Value* v = find(key);
  if (v == nullptr) return std::nullopt;
  if (auto f = v->as_float()) return f;
  if (auto i = v->as_int()) return static_cast<double>(*i);
  if (auto u = v->as_uint()) return static_cast<double>(*u);
  fail_key(key, "is " + describe(*v) + ", expected a number");
}

std::optional<bool> File::optional_bool(std::string_view key) const {
  const Value* v = find(key);
  if (v == nullptr) return std::nullopt;
  if (auto b = v->as_bool()) return b;
  fail_key(key, "is " + describe(*v) + ", expected a bool");
}

std::string_view File::string(std::string_view key) const {
  if (auto s = optional_string(key)) return *s;
  fail_key(key, "is missing");
}

uint64_t File::uint(std::string_view key) const {
  if (auto u = optional_uint(key)) return *u;
  fail_key(key, "is missing");
}

double File::number(std::string_view key) const {
  if (auto n = optional_number(key)) return *n;
  fail_key(key, "is missing");
}

std::string quoted(std::string_view text) {
  static const char* const hex = "0123456789abcdef";
  std::string out = "\"";
  const size_t n = std::min<size_t>(text.size(), 80);
  for (size_t i = 0; i < n; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  out += text.size() > n ? "\"..." : "\"";
  return out;
}

}  // namespace llama::gguf
