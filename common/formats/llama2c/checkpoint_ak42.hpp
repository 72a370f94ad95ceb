// Private to the core: parsing of llama2.c's "ak42" checkpoints (versions 1 and 2).
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>

#include "llama/formats/llama2c_checkpoint.hpp"

namespace llama {

class Ak42Reader {
 public:
  // `bytes` starts with the "ak42" magic and is 4-byte aligned.
  static Checkpoint parse(std::span<const std::byte> bytes, const std::string& source,
                          std::shared_ptr<const void> storage);
};

}  // namespace llama
