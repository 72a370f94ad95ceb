// How the core reads a file from a stranger: a read-only memory mapping of a
// whole file (RAII; checkpoints are read in place) or a bounded whole-file read
// into a string (configs, templates, texts). Both refuse anything but a regular
// file before reading a byte: a directory, a device (/dev/zero never ends), a
// FIFO (opening one would wait for a writer) or a socket.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

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

// Reads the whole regular file at `path`, at most `max_bytes` of it. Throws Error
// "<path>: ..." when it cannot be opened, is not a regular file ("not a regular
// file (a directory)"), or holds more than `max_bytes` ("<size> bytes, more than
// the <max_bytes> <what> may have"): checked on the open file before reading, and
// again while reading, so a file that grows meanwhile (or a /proc file, whose size
// reads 0) is cut off at the limit rather than read without bound.
std::string read_text_file(const std::string& path, int64_t max_bytes,
                           std::string_view what = "such a file");

}  // namespace llama
