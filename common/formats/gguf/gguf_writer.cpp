// GGUF writer: little-endian encoding of metadata and tensor infos, and the
// aligned data section.
#include "llama/formats/gguf_writer.hpp"

#include <cstring>

#include "llama/checked_math.hpp"
#include "llama/error.hpp"

namespace llama::gguf {
namespace {

using Bytes = std::vector<std::byte>;

template <typename T>
void put(Bytes& out, const T& v) {
  const size_t at = out.size();
  out.resize(at + sizeof(T));
  std::memcpy(out.data() + at, &v, sizeof(T));
}

void put_string(Bytes& out, std::string_view s) {
  put(out, static_cast<uint64_t>(s.size()));
  const auto* p = reinterpret_cast<const std::byte*>(s.data());
  out.insert(out.end(), p, p + s.size());
}

template <typename T>
Bytes scalar(const T& v) {
  Bytes b;
  put(b, v);
  return b;
}

template <typename T>
Bytes array(ValueType element, const std::vector<T>& v) {
  Bytes b;
  put(b, static_cast<uint32_t>(element));
  put(b, static_cast<uint64_t>(v.size()));
  for (const T& x : v) put(b, x);
  return b;
}

}  // namespace

void Writer::set(std::string key, ValueType type, Bytes encoded) {
  for (Entry& e : entries_) {
    if (e.key == key) {
      e.type = type;
      e.encoded = std::move(encoded);
      return;
    }
  }
  entries_.push_back({std::move(key), type, std::move(encoded)});
}

void Writer::set_u32(std::string key, uint32_t v) {
  set(std::move(key), ValueType::u32, scalar(v));
}
void Writer::set_i32(std::string key, int32_t v) { set(std::move(key), ValueType::i32, scalar(v)); }
void Writer::set_u64(std::string key, uint64_t v) {
  set(std::move(key), ValueType::u64, scalar(v));
}
void Writer::set_f32(std::string key, float v) { set(std::move(key), ValueType::f32, scalar(v)); }
void Writer::set_bool(std::string key, bool v) {
  set(std::move(key), ValueType::boolean, scalar(static_cast<uint8_t>(v ? 1 : 0)));
}
void Writer::set_string(std::string key, std::string_view v) {
  Bytes b;
  put_string(b, v);
  set(std::move(key), ValueType::string, std::move(b));
}
void Writer::set_strings(std::string key, const std::vector<std::string>& v) {
  Bytes b;
  put(b, static_cast<uint32_t>(ValueType::string));
  put(b, static_cast<uint64_t>(v.size()));
  for (const std::string& s : v) put_string(b, s);
  set(std::move(key), ValueType::array, std::move(b));
}
void Writer::set_f32s(std::string key, const std::vector<float>& v) {
  set(std::move(key), ValueType::array, array(ValueType::f32, v));
}
void Writer::set_i32s(std::string key, const std::vector<int32_t>& v) {
  set(std::move(key), ValueType::array, array(ValueType::i32, v));
}
void Writer::set_encoded(std::string key, ValueType type, Bytes encoded) {
  set(std::move(key), type, std::move(encoded));
}

int64_t Writer::tensor_bytes(const std::string& name, const std::vector<int64_t>& shape,
                             TensorType type) {
  const TypeLayout* layout = type_layout(static_cast<uint32_t>(type));
  if (layout == nullptr) throw Error("tensor " + name + ": " + type_name(type));
  int64_t elements = 1;
  for (int64_t d : shape) elements = checked_mul(elements, d, "tensor " + name);
  const int64_t row = shape.empty() ? 1 : shape.back();
  if (row % layout->block_values != 0) {
    throw Error("tensor " + name + ": rows of " + std::to_string(row) +
                " values do not hold whole " + layout->name + " blocks of " +
                std::to_string(layout->block_values));
  }
  return checked_mul(elements / layout->block_values, layout->block_bytes, "tensor " + name);
}

void Writer::add_tensor(std::string name, std::vector<int64_t> shape, TensorType type,
                        Producer produce) {
  const int64_t bytes = tensor_bytes(name, shape, type);
  tensors_.push_back({std::move(name), std::move(shape), type, bytes, std::move(produce)});
}

int64_t Writer::write(std::ostream& out, const std::string& destination, uint32_t alignment) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
    throw Error(destination + ": GGUF alignment " + std::to_string(alignment) +
                " is not a power of two");
  }
  if (alignment != File::kDefaultAlignment) set_u32("general.alignment", alignment);
  auto pad = [&](uint64_t n) { return (alignment - n % alignment) % alignment; };

  Bytes head;
  put(head, File::kMagic);
  put(head, uint32_t{3});
  put(head, static_cast<uint64_t>(tensors_.size()));
  put(head, static_cast<uint64_t>(entries_.size()));
  for (const Entry& e : entries_) {
    put_string(head, e.key);
    put(head, static_cast<uint32_t>(e.type));
    head.insert(head.end(), e.encoded.begin(), e.encoded.end());
  }
  uint64_t offset = 0;
  for (const PendingTensor& t : tensors_) {
    put_string(head, t.name);
    put(head, static_cast<uint32_t>(t.shape.size()));
    for (auto d = t.shape.rbegin(); d != t.shape.rend(); ++d) put(head, static_cast<uint64_t>(*d));
    put(head, static_cast<uint32_t>(t.type));
    put(head, offset);
    offset += static_cast<uint64_t>(t.bytes) + pad(static_cast<uint64_t>(t.bytes));
  }
  head.resize(head.size() + pad(head.size()));
  auto emit = [&](const Bytes& b) {
    out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
    if (!out) throw Error(destination + ": write failed");
  };
  emit(head);
  int64_t written = static_cast<int64_t>(head.size());
  for (PendingTensor& t : tensors_) {
    Bytes data = t.produce();
    if (static_cast<int64_t>(data.size()) != t.bytes) {
      throw Error(destination + ": tensor " + t.name + " produced " + std::to_string(data.size()) +
                  " bytes, its shape and type need " + std::to_string(t.bytes));
    }
    data.resize(data.size() + pad(data.size()));
    emit(data);
    written += static_cast<int64_t>(data.size());
    t.produce = nullptr;  // release what the producer captured
  }
  return written;
}

}  // namespace llama::gguf
