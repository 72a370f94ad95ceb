// The ELF header check and the census of loaded cores (dl_iterate_phdr).
#include "shared_object.hpp"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>

#include <array>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "llama/error.hpp"
#include "llama/version.hpp"

namespace llama::plugins {

void check_shared_object(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (!fs::exists(status)) throw Error("no such file");
  if (fs::is_directory(status)) throw Error("is a directory, not a shared library");
  if (!fs::is_regular_file(status)) throw Error("not a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot open: " + std::string(std::strerror(errno)));
  Elf64_Ehdr header{};
  in.read(reinterpret_cast<char*>(&header), sizeof header);
  if (in.gcount() < 18 || std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0) {
    throw Error("not a shared library (no ELF header)");
  }
  // e_type sits at the same offset in 32- and 64-bit headers; dlopen judges the rest.
  if (header.e_type == ET_EXEC) throw Error("an executable, not a shared library");
  if (header.e_type != ET_DYN) {
    throw Error("not a shared library (ELF type " + std::to_string(header.e_type) + ")");
  }
}

std::vector<std::string> loaded_cores() {
  std::vector<std::string> cores;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) {
        const std::string path = info->dlpi_name != nullptr ? info->dlpi_name : "";
        const std::string file = std::filesystem::path(path).filename().string();
        if (file.rfind("libllama-core.so", 0) == 0) {
          static_cast<std::vector<std::string>*>(out)->push_back(path);
        }
        return 0;
      },
      &cores);
  return cores;
}

std::string this_core_file() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&core_version), &info) == 0 ||
      info.dli_fname == nullptr) {
    return "this program";
  }
  return info.dli_fname;
}

}  // namespace llama::plugins
