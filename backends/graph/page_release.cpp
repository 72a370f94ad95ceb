// FileMappings: /proc/self/maps parsing and madvise.
#include "page_release.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

namespace llama::graph {

FileMappings FileMappings::of_this_process() {
  FileMappings m;
  std::ifstream maps("/proc/self/maps");
  std::string line;
  // "start-end perms offset dev inode path"
  while (std::getline(maps, line)) {
    std::istringstream s(line);
    std::string span, perms, offset, dev;
    uint64_t inode = 0;
    if (!(s >> span >> perms >> offset >> dev >> inode)) continue;
    const size_t dash = span.find('-');
    if (dash == std::string::npos || perms.size() < 4 || inode == 0) continue;
    if (perms[1] != '-') continue;  // writable: could hold data only in memory
    Range r{};
    try {
      r.begin = static_cast<uintptr_t>(std::stoull(span.substr(0, dash), nullptr, 16));
      r.end = static_cast<uintptr_t>(std::stoull(span.substr(dash + 1), nullptr, 16));
    } catch (const std::exception&) {
      continue;
    }
    m.ranges_.push_back(r);
  }
  return m;
}

bool FileMappings::read_only_file(const void* p, size_t bytes) const {
  const auto begin = reinterpret_cast<uintptr_t>(p);
  for (const Range& r : ranges_) {
    if (begin >= r.begin && begin + bytes <= r.end) return true;
  }
  return false;
}

size_t FileMappings::release(std::span<const std::byte> range) const {
  const size_t bytes = range.size_bytes();
  if (bytes == 0 || !read_only_file(range.data(), bytes)) return 0;
  const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<uintptr_t>(range.data());
  const uintptr_t first = (begin + page - 1) / page * page;
  const uintptr_t last = (begin + bytes) / page * page;
  if (first >= last) return 0;
  if (::madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED) != 0) return 0;
  return static_cast<size_t>(last - first);
}

}  // namespace llama::graph
