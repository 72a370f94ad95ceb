// Writes a loaded checkpoint in any of llama2.c's layouts, byte for byte as
// its export.py does: legacy version 0, version 1 (f32) and version 2 (Q8_0).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "llama/formats/llama2c_checkpoint.hpp"

namespace llama {

struct WriteOptions {
  CheckpointFormat format = CheckpointFormat::v0;
  int64_t group_size = 64;  // version 2: values per scale, before the back-off
};

struct TensorQuantization {
  std::string name;
  float max_error = 0;  // largest |dequantized - original| over the tensor's layers
  bool copied = false;  // Q8_0 source with the same group size: values kept as they are
};

struct WriteReport {
  int64_t group_size = 0;                     // version 2: the group size written
  std::vector<std::string> backoffs;          // export.py's "BACKOFF" messages
  std::vector<TensorQuantization> quantized;  // version 2: file order
  int64_t bytes = 0;                          // bytes written
};

// export.py's group size for a model of `config`: halve `requested` until it
// divides dim. Unlike export.py it keeps halving until it also divides
// hidden_dim (export.py's file would end w2's rows in a partial group, which
// the loader refuses). Throws Error unless requested > 0.
int64_t q80_group_size(const Config& config, int64_t requested, std::vector<std::string>* backoffs);

// Writes `in` to `out` in `options.format`. Q8_0 sources are dequantized for
// the f32 layouts; a Q8_0 source written as version 2 with its own group size
// keeps its values and scales. Version 0's rotary tables (which run.c ignores)
// are copied from a version 0 source, else computed as export.py does in f32.
// Throws Error naming `destination` when the stream fails.
WriteReport write_checkpoint(const Checkpoint& in, const WriteOptions& options, std::ostream& out,
                             const std::string& destination);

}  // namespace llama
