// The JSON header of a safetensors file, parsed by a SAX state machine that
// accepts only the format's shape ({name: {dtype, shape, data_offsets}} plus a
// "__metadata__" map of strings), so a hostile header builds no DOM: memory
// stays proportional to the tensors it names, nesting is bounded by the format.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace llama {

struct HeaderEntry {
  std::string name;
  std::string dtype;           // as written; checked by the caller
  std::vector<int64_t> shape;  // each in [0, INT64_MAX]
  int64_t begin = 0, end = 0;  // data_offsets, relative to the data
};

struct ParsedHeader {
  std::vector<HeaderEntry> tensors;  // in the header's order
  std::vector<std::pair<std::string, std::string>> metadata;
};

// Throws Error "<source>: header: <why>" on invalid JSON, a structure other
// than the format's, a duplicate name or key, a missing field, a shape of more than
// `max_rank` dimensions, or more than `max_entries` tensors (or metadata entries).
ParsedHeader parse_safetensors_header(std::string_view json, const std::string& source,
                                      size_t max_rank, size_t max_entries);

}  // namespace llama
