// Synthetic safetensors files and Hugging Face directories (hf_fixtures.hpp).
#include "hf_fixtures.hpp"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "llama/formats/hf_checkpoint.hpp"
#include "test_support.hpp"

namespace llama::test {

nlohmann::json tiny_hf_config() {
  return {{"architectures", {"LlamaForCausalLM"}},
          {"model_type", "llama"},
          {"hidden_size", 8},
          {"intermediate_size", 12},
          {"num_hidden_layers", 1},
          {"num_attention_heads", 2},
          {"num_key_value_heads", 1},
          {"vocab_size", 10},
          {"max_position_embeddings", 16},
          {"rms_norm_eps", 1e-5},
          {"tie_word_embeddings", false},
          {"bos_token_id", 1},
          {"eos_token_id", 2}};
}

std::vector<FixtureTensor> hf_fixture_tensors(const nlohmann::json& config,
                                              SafetensorsDtype dtype) {
  const HfConfig c = parse_hf_config(config.dump(), "fixture config.json");
  std::vector<FixtureTensor> out;
  for (const HfTensorSpec& s : hf_tensor_specs(c)) out.push_back({s.name, dtype, s.shape});
  return out;
}

std::vector<std::byte> safetensors_bytes(const std::vector<FixtureTensor>& tensors) {
  std::vector<std::vector<std::byte>> data;
  std::vector<SafetensorsOutput> outputs;
  uint8_t next = 1;
  for (const FixtureTensor& t : tensors) {
    int64_t n = element_bytes(t.dtype);
    for (int64_t d : t.shape) n *= d;
    std::vector<std::byte> bytes(static_cast<size_t>(n));
    for (auto& b : bytes) b = std::byte{next++};
    data.push_back(std::move(bytes));
  }
  for (size_t i = 0; i < tensors.size(); ++i) {
    outputs.push_back({tensors[i].name, tensors[i].dtype, tensors[i].shape, data[i]});
  }
  std::ostringstream out;
  write_safetensors(out, outputs, {}, "fixture");
  const std::string s = out.str();
  std::vector<std::byte> bytes(s.size());
  std::memcpy(bytes.data(), s.data(), s.size());
  return bytes;
}

std::vector<std::byte> raw_safetensors(const std::string& header, size_t data_bytes,
                                       std::optional<uint64_t> header_length) {
  std::vector<std::byte> out;
  append(out, header_length.value_or(header.size()));
  for (char c : header) out.push_back(static_cast<std::byte>(c));
  out.resize(out.size() + data_bytes, std::byte{0});
  return out;
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

std::string make_hf_dir(const std::string& name, const nlohmann::json& config,
                        const std::vector<FixtureTensor>& tensors,
                        const nlohmann::json& generation_config) {
  const std::filesystem::path dir = temp_path(name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  write_text((dir / "config.json").string(), config.dump(1));
  if (!generation_config.is_null()) {
    write_text((dir / "generation_config.json").string(), generation_config.dump(1));
  }
  write_file((dir / "model.safetensors").string(), safetensors_bytes(tensors));
  return dir.string();
}

}  // namespace llama::test
