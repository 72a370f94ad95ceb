// Releasing the resident pages of weights the backend has copied: after the
// projections are stacked into owned matrices, the originals in the file
// mapping are never read again, yet their pages would stay in this process's
// RSS next to the copies. madvise(MADV_DONTNEED) drops them; on a read-only
// file mapping that is always safe (a later read, e.g. by another backend on
// the same model, faults the page back in from the page cache). Memory that is
// not a read-only file mapping (an owned copy, anonymous memory) is left alone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace llama::graph {

class FileMappings {
 public:
  // The read-only file mappings of this process (/proc/self/maps); empty if unreadable.
  static FileMappings of_this_process();

  // True when [p, p + bytes) lies inside one read-only file mapping.
  bool read_only_file(const void* p, size_t bytes) const;

  // Drops the whole pages inside `range` if it is a read-only file mapping;
  // returns the bytes released.
  size_t release(std::span<const std::byte> range) const;

 private:
  struct Range {
    uintptr_t begin, end;
  };
  std::vector<Range> ranges_;
};

}  // namespace llama::graph
