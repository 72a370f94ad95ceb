// Synthetic safetensors files and Hugging Face directories for the format
// tests: a tiny LlamaForCausalLM config, its tensors, and raw headers for the
// bad inputs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "llama/formats/safetensors_writer.hpp"

namespace llama::test {

// hidden 8, intermediate 12, 1 layer, 2 heads, 1 kv head, vocab 10, context 16, untied.
nlohmann::json tiny_hf_config();

// A tensor to write: `dtype` and `shape`, bytes counting up from `seed`.
struct FixtureTensor {
  std::string name;
  SafetensorsDtype dtype = SafetensorsDtype::F32;
  std::vector<int64_t> shape;
};
// Every tensor `config` (parse_hf_config of it) implies, in `dtype`.
std::vector<FixtureTensor> hf_fixture_tensors(const nlohmann::json& config,
                                              SafetensorsDtype dtype = SafetensorsDtype::F32);

// The bytes of a safetensors file holding `tensors` (deterministic values).
std::vector<std::byte> safetensors_bytes(const std::vector<FixtureTensor>& tensors);
// A file made of the 8-byte `header_length` (default: the header's), `header`
// and `data_bytes` zeros.
std::vector<std::byte> raw_safetensors(const std::string& header, size_t data_bytes,
                                       std::optional<uint64_t> header_length = {});

// A fresh directory under the test temp dir with config.json (and the other
// files when not empty) and model.safetensors holding `tensors`.
std::string make_hf_dir(const std::string& name, const nlohmann::json& config,
                        const std::vector<FixtureTensor>& tensors,
                        const nlohmann::json& generation_config = nullptr);

void write_text(const std::string& path, const std::string& text);

}  // namespace llama::test
