// MappedFile and read_text_file: open + fstat (regular files only) + mmap or a
// bounded read, with errors that name the file.
#include "llama/mapped_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "llama/error.hpp"

namespace llama {
namespace {

// Closes on every path out, including the throws below.
struct FileDescriptor {
  int fd = -1;
  ~FileDescriptor() {
    if (fd >= 0) ::close(fd);
  }
};

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a file";
}

// Opens `path` read-only and returns its size, refusing anything but a regular
// file. The type is read from the open descriptor (fstat), so it is the file that
// will be read, not one swapped in after a check by name. O_NONBLOCK makes opening
// a FIFO return at once instead of waiting for a writer; on a regular file it
// changes nothing (reads of regular files never block in the O_NONBLOCK sense).
int64_t open_regular(const std::string& path, FileDescriptor& file) {
  file.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (file.fd < 0) throw Error(path + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(file.fd, &st) != 0) throw Error(path + ": cannot stat: " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) {
    throw Error(path + ": not a regular file (" + kind_of(st.st_mode) + ")");
  }
  return static_cast<int64_t>(st.st_size);
}

std::string too_large(const std::string& path, const std::string& size, int64_t max_bytes,
                      std::string_view what) {
  return path + ": " + size + " bytes, more than the " + std::to_string(max_bytes) + " " +
         std::string(what) + " may have";
}

}  // namespace

MappedFile::MappedFile(const std::string& path) : path_(path) {
  FileDescriptor file;
  size_ = static_cast<size_t>(open_regular(path, file));
  if (size_ > 0) {
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, file.fd, 0);
    if (p == MAP_FAILED) throw Error(path + ": cannot map: " + std::strerror(errno));
    data_ = static_cast<const std::byte*>(p);
  }
  // Closing the descriptor here is fine: the mapping keeps the file alive.
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<std::byte*>(data_), size_);
}

std::string read_text_file(const std::string& path, int64_t max_bytes, std::string_view what) {
  FileDescriptor file;
  const int64_t size = open_regular(path, file);
  if (size > max_bytes) throw Error(too_large(path, std::to_string(size), max_bytes, what));
  // Reads into `out` from its current end until it holds `until` bytes or the file ends.
  const auto read_into = [&](std::string& out, size_t until) {
    while (out.size() < until) {
      char chunk[1 << 16];
      const ssize_t n = ::read(file.fd, chunk, std::min(sizeof chunk, until - out.size()));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw Error(path + ": cannot read: " + std::strerror(errno));
      if (n == 0) return;  // the end (a file that shrank meanwhile ends early)
      out.append(chunk, static_cast<size_t>(n));
    }
  };
  std::string text;
  text.reserve(static_cast<size_t>(size));
  read_into(text, static_cast<size_t>(size));
  // The size was a snapshot: the file may have grown since, or be a /proc file whose
  // size reads 0. Read on to its end, but never past max_bytes + 1 (one byte more
  // tells a file that grew past the limit from one that reached it).
  if (text.size() == static_cast<size_t>(size)) read_into(text, static_cast<size_t>(max_bytes) + 1);
  if (text.size() > static_cast<size_t>(max_bytes)) {
    throw Error(path + ": grew past the " + std::to_string(max_bytes) + " bytes " +
                std::string(what) + " may have while being read");
  }
  return text;
}

}  // namespace llama
