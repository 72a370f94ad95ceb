// Reads llama2.c checkpoints in place: legacy version 0 (no magic, f32),
// version 1 ("ak42" header, f32) and version 2 ("ak42" header, Q8_0). Header
// validation, overflow-checked tensor offsets, and a table of every tensor.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "llama/kernels/products/llama2c_int8.hpp"
#include "llama/model.hpp"

namespace llama {

enum class CheckpointFormat { v0, v1, v2 };
// "legacy version 0 (f32)", "version 1 (f32)", "version 2 (Q8_0)".
const char* to_string(CheckpointFormat format);

struct TensorInfo {
  std::string name;             // e.g. "wq", "token_embedding"
  std::vector<int64_t> shape;   // leading n_layers for layered tensors
  int64_t offset = 0;           // byte offset in the file (Q8_0: the first layer's values)
  std::span<const float> data;  // f32 tensors: f32 view into the file
  // Q8_0 tensors: one entry per layer (one for an unlayered tensor); `data` is empty.
  std::vector<QuantizedTensor> quantized;
};

class Checkpoint {
 public:
  // Maps `path` read-only and parses it; throws Error naming the file.
  static Checkpoint open(const std::string& path);
  // Parses bytes already in memory; `storage` keeps them alive. `source` names
  // them in errors. Bytes must be 4-byte aligned.
  static Checkpoint parse(std::span<const std::byte> bytes, const std::string& source,
                          std::shared_ptr<const void> storage);

  const Model& model() const { return model_; }
  const Config& config() const { return model_.config; }
  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  int64_t file_size() const { return file_size_; }
  CheckpointFormat format() const { return format_; }
  // Values per Q8_0 scale (version 2), else 0.
  int64_t group_size() const { return group_size_; }
  // Bytes the tensors occupy (what a forward pass reads).
  int64_t weight_bytes() const;
  static constexpr int64_t kHeaderBytes = 28;         // seven int32
  static constexpr int64_t kAk42HeaderBytes = 256;    // versions 1 and 2
  static constexpr uint32_t kAk42Magic = 0x616b3432;  // "ak42"

 private:
  friend class Ak42Reader;  // versions 1 and 2 (checkpoint_ak42.cpp)
  CheckpointFormat format_ = CheckpointFormat::v0;
  Model model_;
  std::vector<TensorInfo> tensors_;
  int64_t file_size_ = 0;
  int64_t group_size_ = 0;
};

}  // namespace llama
