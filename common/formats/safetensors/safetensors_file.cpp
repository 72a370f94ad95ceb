// SafetensorsFile: the header length, the header, then every tensor's offsets
// against the file, its dtype x shape and its neighbours, before any view.
#include <algorithm>
#include <array>
#include <cstring>

#include "header_parser.hpp"
#include "llama/checked_math.hpp"
#include "llama/error.hpp"
#include "llama/formats/safetensors.hpp"
#include "llama/mapped_file.hpp"

namespace llama {
namespace {

struct DtypeInfo {
  SafetensorsDtype dtype;
  const char* name;
  int64_t bytes;
};
constexpr std::array<DtypeInfo, 15> kDtypes = {{
    {SafetensorsDtype::BOOL, "BOOL", 1},
    {SafetensorsDtype::U8, "U8", 1},
    {SafetensorsDtype::I8, "I8", 1},
    {SafetensorsDtype::F8_E5M2, "F8_E5M2", 1},
    {SafetensorsDtype::F8_E4M3, "F8_E4M3", 1},
    {SafetensorsDtype::I16, "I16", 2},
    {SafetensorsDtype::U16, "U16", 2},
    {SafetensorsDtype::F16, "F16", 2},
    {SafetensorsDtype::BF16, "BF16", 2},
    {SafetensorsDtype::I32, "I32", 4},
    {SafetensorsDtype::U32, "U32", 4},
    {SafetensorsDtype::F32, "F32", 4},
    {SafetensorsDtype::F64, "F64", 8},
    {SafetensorsDtype::I64, "I64", 8},
    {SafetensorsDtype::U64, "U64", 8},
}};

const DtypeInfo& info(SafetensorsDtype dtype) {
  return kDtypes[static_cast<size_t>(dtype)];  // the table is in the enum's order
}

std::string shape_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string range_string(int64_t begin, int64_t end) {
  return "[" + std::to_string(begin) + ", " + std::to_string(end) + "]";
}

}  // namespace

const char* to_string(SafetensorsDtype dtype) { return info(dtype).name; }
int64_t element_bytes(SafetensorsDtype dtype) { return info(dtype).bytes; }

int64_t SafetensorsTensor::elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;  // checked when the file was parsed
  return n;
}

SafetensorsFile SafetensorsFile::open(const std::string& path) {
  auto file = std::make_shared<const MappedFile>(path);
  const auto bytes = file->bytes();
  return parse(bytes, path, std::move(file));
}

SafetensorsFile SafetensorsFile::parse(std::span<const std::byte> bytes, const std::string& source,
                                       std::shared_ptr<const void> storage) {
  const auto size = static_cast<int64_t>(bytes.size());
  if (size < 8) {
    throw Error(source + ": " + std::to_string(size) +
                " bytes, too short for a safetensors file (an 8-byte header length first)");
  }
  uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);  // little-endian, as every supported CPU
  if (n > static_cast<uint64_t>(kMaxHeaderBytes)) {
    throw Error(source + ": header length " + std::to_string(n) + " is above the " +
                std::to_string(kMaxHeaderBytes) + "-byte limit (not a safetensors file?)");
  }
  if (static_cast<int64_t>(n) > size - 8) {
    throw Error(source + ": header length " + std::to_string(n) + " is beyond the file (" +
                std::to_string(size) + " bytes; truncated?)");
  }
  const auto header_bytes = static_cast<int64_t>(n);
  const std::string_view json(reinterpret_cast<const char*>(bytes.data()) + 8, n);
  if (json.empty() || json.front() != '{') {
    throw Error(source + ": header: does not start with '{' (not a safetensors file?)");
  }
  ParsedHeader header = parse_safetensors_header(json, source, kMaxRank, kMaxEntries);

  SafetensorsFile file;
  file.source_ = source;
  file.header_bytes_ = header_bytes;
  file.file_size_ = size;
  file.storage_ = std::move(storage);
  file.metadata_ = std::move(header.metadata);
  const int64_t data_begin = 8 + header_bytes;
  const int64_t data_size = size - data_begin;
  file.tensors_.reserve(header.tensors.size());  // bounded by the header's length
  for (HeaderEntry& e : header.tensors) {
    const std::string what = source + ": tensor \"" + e.name + "\"";
    const auto known = std::find_if(kDtypes.begin(), kDtypes.end(),
                                    [&](const DtypeInfo& d) { return e.dtype == d.name; });
    if (known == kDtypes.end()) {
      throw Error(what + ": unknown dtype \"" + e.dtype + "\"");
    }
    int64_t count = 1;
    for (int64_t d : e.shape)
      count = checked_mul(count, d, what + " shape " + shape_string(e.shape));
    const int64_t nbytes =
        checked_mul(count, known->bytes, what + " shape " + shape_string(e.shape));
    if (e.end < e.begin) {
      throw Error(what + ": data_offsets " + range_string(e.begin, e.end) +
                  " end before they begin");
    }
    if (e.end > data_size) {
      throw Error(what + ": data_offsets " + range_string(e.begin, e.end) +
                  " fall outside the file (the data after the header is " +
                  std::to_string(data_size) + " bytes; truncated?)");
    }
    if (e.end - e.begin != nbytes) {
      throw Error(what + ": data_offsets " + range_string(e.begin, e.end) + " hold " +
                  std::to_string(e.end - e.begin) + " bytes but dtype " + known->name +
                  " x shape " + shape_string(e.shape) + " needs " + std::to_string(nbytes));
    }
    SafetensorsTensor t;
    t.name = std::move(e.name);
    t.dtype = known->dtype;
    t.shape = std::move(e.shape);
    t.offset = data_begin + e.begin;
    t.bytes = bytes.subspan(static_cast<size_t>(t.offset), static_cast<size_t>(nbytes));
    file.tensors_.push_back(std::move(t));
  }
  // The reference implementation's rule: sorted by (begin, end), each tensor
  // starts where the previous one ends and the last one ends at the end of the file.
  std::stable_sort(file.tensors_.begin(), file.tensors_.end(),
                   [](const SafetensorsTensor& a, const SafetensorsTensor& b) {
                     return std::pair(a.offset, a.bytes.size()) <
                            std::pair(b.offset, b.bytes.size());
                   });
  int64_t at = data_begin;
  const SafetensorsTensor* previous = nullptr;
  for (const SafetensorsTensor& t : file.tensors_) {
    const int64_t end = t.offset + static_cast<int64_t>(t.bytes.size());
    if (t.offset < at) {
      throw Error(source + ": tensor \"" + t.name + "\" (data_offsets " +
                  range_string(t.offset - data_begin, end - data_begin) + ") overlaps tensor \"" +
                  previous->name + "\" (ending at " + std::to_string(at - data_begin) + ")");
    }
    if (t.offset > at) {
      throw Error(source + ": data bytes [" + std::to_string(at - data_begin) + ", " +
                  std::to_string(t.offset - data_begin) + ") before tensor \"" + t.name +
                  "\" belong to no tensor");
    }
    at = end;
    previous = &t;
  }
  if (at != size) {
    throw Error(source + ": " + std::to_string(size - at) +
                " bytes after the last tensor's data (" + "the header accounts for " +
                std::to_string(at) + " of " + std::to_string(size) + ")");
  }
  file.by_name_.resize(file.tensors_.size());
  for (size_t i = 0; i < file.by_name_.size(); ++i) file.by_name_[i] = i;
  std::sort(file.by_name_.begin(), file.by_name_.end(),
            [&](size_t a, size_t b) { return file.tensors_[a].name < file.tensors_[b].name; });
  return file;
}

const SafetensorsTensor* SafetensorsFile::find(std::string_view name) const {
  const auto it =
      std::lower_bound(by_name_.begin(), by_name_.end(), name,
                       [&](size_t i, std::string_view n) { return tensors_[i].name < n; });
  if (it == by_name_.end() || tensors_[*it].name != name) return nullptr;
  return &tensors_[*it];
}

}  // namespace llama
