// Reads safetensors files in place (mmap): an 8-byte little-endian header
// length N, N bytes of JSON naming each tensor's dtype, shape and data_offsets
// (relative to the data that follows the header), and an optional
// "__metadata__" map of strings. Every offset is checked against the file, the
// dtype x shape and the other tensors before a view is made; the rules are the
// reference implementation's (huggingface/safetensors): tensors cover the data
// back to back, without gaps, overlap or trailing bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace llama {

// Every dtype the format defines. Models run F32, BF16 and F16; the others are
// read (so their offsets are checked) and refused by the model loader by name.
enum class SafetensorsDtype : uint8_t {
  BOOL,
  U8,
  I8,
  F8_E5M2,
  F8_E4M3,
  I16,
  U16,
  F16,
  BF16,
  I32,
  U32,
  F32,
  F64,
  I64,
  U64
};
const char* to_string(SafetensorsDtype dtype);  // "F32", "BF16", ...
int64_t element_bytes(SafetensorsDtype dtype);

struct SafetensorsTensor {
  std::string name;
  SafetensorsDtype dtype = SafetensorsDtype::F32;
  std::vector<int64_t> shape;        // row-major, outermost first
  int64_t offset = 0;                // byte offset of its data in the file
  std::span<const std::byte> bytes;  // its data, inside the file's bytes
  int64_t elements() const;
};

class SafetensorsFile {
 public:
  // Header length cap, as the reference implementation's MAX_HEADER_SIZE.
  static constexpr int64_t kMaxHeaderBytes = 100'000'000;
  // A header deeper or wider than these is refused, not parsed.
  static constexpr size_t kMaxRank = 16;
  // Tensors (and "__metadata__" entries) in one file. A model this project runs has
  // 9 per layer and 3 more (Llama 3.1 405B: 1,137, in 191 shards); a 100 MB header of
  // empty tensors names 1.7 million, 670 MB parsed. The same limit as GGUF's.
  static constexpr size_t kMaxEntries = 65536;

  // Maps `path` read-only and parses it; throws Error starting with the path.
  static SafetensorsFile open(const std::string& path);
  // Parses bytes already in memory; `storage` keeps them alive and `source`
  // names them in errors.
  static SafetensorsFile parse(std::span<const std::byte> bytes, const std::string& source,
                               std::shared_ptr<const void> storage);

  const std::string& source() const { return source_; }
  // In the order of their data in the file.
  const std::vector<SafetensorsTensor>& tensors() const { return tensors_; }
  // The tensor called `name`, or nullptr.
  const SafetensorsTensor* find(std::string_view name) const;
  // "__metadata__" entries in the header's order.
  const std::vector<std::pair<std::string, std::string>>& metadata() const { return metadata_; }
  int64_t header_bytes() const { return header_bytes_; }  // N, the JSON's length
  int64_t file_size() const { return file_size_; }
  const std::shared_ptr<const void>& storage() const { return storage_; }

 private:
  std::string source_;
  std::vector<SafetensorsTensor> tensors_;
  std::vector<size_t> by_name_;  // indices into tensors_, sorted by name
  std::vector<std::pair<std::string, std::string>> metadata_;
  int64_t header_bytes_ = 0;
  int64_t file_size_ = 0;
  std::shared_ptr<const void> storage_;
};

// The tensors of one model: a single model.safetensors, or the shards that a
// model.safetensors.index.json lists (its "weight_map" names, for every
// tensor, the shard file beside the index that holds it).
class SafetensorsModel {
 public:
  // `path` is a .safetensors file or a model.safetensors.index.json.
  static SafetensorsModel open(const std::string& path);
  // One file already parsed (in memory); its source names the model.
  static SafetensorsModel from_file(SafetensorsFile file);

  struct Entry {
    const SafetensorsTensor* tensor;
    const SafetensorsFile* file;
  };
  // The tensor called `name` and the file holding it; `file` nullptr if absent.
  Entry find(std::string_view name) const;
  // Every tensor of every file, sorted by name.
  const std::vector<Entry>& entries() const { return entries_; }
  const std::vector<std::unique_ptr<SafetensorsFile>>& files() const { return files_; }
  // The path given to open (the index for a sharded model).
  const std::string& source() const { return source_; }

 private:
  void index_entries();
  std::string source_;
  std::vector<std::unique_ptr<SafetensorsFile>> files_;
  std::vector<Entry> entries_;
};

}  // namespace llama
