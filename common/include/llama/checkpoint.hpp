// Reads llama2.c checkpoints (legacy version 0) in place: header validation,
// overflow-checked tensor offsets, and a table of every tensor.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "llama/model.hpp"

namespace llama {

struct TensorInfo {
  std::string name;             // e.g. "wq", "token_embedding"
  std::vector<int64_t> shape;   // leading n_layers for layered tensors
  int64_t offset = 0;           // byte offset in the file
  std::span<const float> data;  // f32 view into the file
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
  // Bytes the tensors occupy (what a forward pass reads).
  int64_t weight_bytes() const;
  static constexpr int64_t kHeaderBytes = 28;  // seven int32

 private:
  Model model_;
  std::vector<TensorInfo> tensors_;
  int64_t file_size_ = 0;
};

}  // namespace llama
