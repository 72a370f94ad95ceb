// read_flag_file and require_file_or_directory: the apps' side of reading files
// named by flags (the read itself is the core's read_text_file).
#include "flag_files.hpp"

#include <sys/stat.h>

#include "llama/error.hpp"
#include "llama/mapped_file.hpp"

namespace llama::cli {

std::string read_flag_file(std::string_view flag, const std::string& path, int64_t max_bytes,
                           std::string_view what) {
  try {
    return read_text_file(path, max_bytes, what);
  } catch (const Error& e) {
    throw Error(std::string(flag) + ": " + e.what());
  }
}

void require_file_or_directory(std::string_view flag, const std::string& path) {
  struct stat st {};
  if (path.empty() || ::stat(path.c_str(), &st) != 0) return;  // the reader says what is wrong
  if (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) return;
  const char* kind = S_ISCHR(st.st_mode)    ? "a character device"
                     : S_ISBLK(st.st_mode)  ? "a block device"
                     : S_ISFIFO(st.st_mode) ? "a FIFO"
                     : S_ISSOCK(st.st_mode) ? "a socket"
                                            : "not a file";
  throw Error(std::string(flag) + ": " + path + ": not a regular file (" + kind + ")");
}

}  // namespace llama::cli
