// A read-only memory mapping of a whole file (RAII); checkpoints are read in place.
#pragma once

#include <cstddef>
#include <span>
#include <string>

namespace llama {

class MappedFile {
 public:
  // Maps `path` read-only; throws Error naming the file and the reason.
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::span<const std::byte> bytes() const { return {data_, size_}; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  const std::byte* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace llama
