// Writes a safetensors file: the tensors back to back in the order given, the
// header padded with spaces so the data starts 8-byte aligned (as the reference
// implementation writes it), so every f32 tensor of the file can be read in place.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "llama/formats/safetensors.hpp"

namespace llama {

struct SafetensorsOutput {
  std::string name;
  SafetensorsDtype dtype = SafetensorsDtype::F32;
  std::vector<int64_t> shape;
  std::span<const std::byte> bytes;  // elements x element_bytes(dtype)
};

// Throws Error naming `destination` when a tensor's bytes disagree with its
// dtype x shape, a name repeats, or the stream fails.
void write_safetensors(std::ostream& out, std::span<const SafetensorsOutput> tensors,
                       const std::vector<std::pair<std::string, std::string>>& metadata,
                       const std::string& destination);

}  // namespace llama
