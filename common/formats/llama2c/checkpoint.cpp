// Checkpoint parsing: the legacy llama2.c layout, every offset checked before use.
#include "llama/formats/llama2c_checkpoint.hpp"

#include <cstring>
#include <string_view>

#include "checkpoint_ak42.hpp"
#include "llama/checked_math.hpp"
#include "llama/error.hpp"
#include "llama/mapped_file.hpp"
#include "llama2c_weights.hpp"

namespace llama {
namespace {

// Hands out consecutive tensors from the file, refusing any past its end.
class TensorCursor {
 public:
  // `expected_size`: the file size the header implies, named when a tensor is cut short.
  TensorCursor(std::span<const std::byte> bytes, const std::string& source, int64_t offset,
               int64_t expected_size)
      : bytes_(bytes), source_(source), offset_(offset), expected_size_(expected_size) {}

  TensorInfo take(const std::string& name, std::vector<int64_t> shape) {
    int64_t count = 1;
    for (int64_t d : shape) count = checked_mul(count, d, source_ + ": tensor " + name);
    const int64_t bytes = checked_mul(count, 4, source_ + ": tensor " + name);
    const int64_t end = checked_add(offset_, bytes, source_ + ": tensor " + name);
    const auto size = static_cast<int64_t>(bytes_.size());
    if (end > size) {
      throw Error(source_ + ": truncated: tensor " + name + " at offset " +
                  std::to_string(offset_) + " needs bytes up to " + std::to_string(end) +
                  ", file has " + std::to_string(size) + " (the header implies " +
                  std::to_string(expected_size_) + " bytes in all)");
    }
    TensorInfo t{
        name,
        std::move(shape),
        offset_,
        {reinterpret_cast<const float*>(bytes_.data() + offset_), static_cast<size_t>(count)},
        {}};
    offset_ = end;
    return t;
  }
  void skip(const std::string& what, int64_t floats) { (void)take(what, {floats}); }
  int64_t offset() const { return offset_; }

 private:
  std::span<const std::byte> bytes_;
  const std::string& source_;
  int64_t offset_;
  int64_t expected_size_;
};

// Names well-known formats that are not llama2.c checkpoints, or returns "".
std::string foreign_format(std::span<const std::byte> bytes) {
  auto starts_with = [&](std::string_view magic) {
    return bytes.size() >= magic.size() &&
           std::memcmp(bytes.data(), magic.data(), magic.size()) == 0;
  };
  if (starts_with("GGUF")) return "a GGUF file (magic \"GGUF\" at offset 0)";
  if (starts_with("PK\x03\x04"))
    return "a zip archive such as a PyTorch .pt/.pth (magic \"PK\" at offset 0)";
  // safetensors: a little-endian u64 JSON length, then the JSON object.
  uint64_t json_bytes = 0;
  if (bytes.size() > 10) std::memcpy(&json_bytes, bytes.data(), sizeof json_bytes);
  if (bytes.size() > 10 && json_bytes <= bytes.size() - 8 && static_cast<char>(bytes[8]) == '{' &&
      static_cast<char>(bytes[9]) == '"') {
    return "a safetensors file (JSON header at offset 8)";
  }
  return "";
}

}  // namespace

Checkpoint Checkpoint::open(const std::string& path) {
  auto file = std::make_shared<MappedFile>(path);
  return parse(file->bytes(), path, file);
}

Checkpoint Checkpoint::parse(std::span<const std::byte> bytes, const std::string& source,
                             std::shared_ptr<const void> storage) {
  if (reinterpret_cast<uintptr_t>(bytes.data()) % alignof(float) != 0) {
    throw Error(source + ": checkpoint bytes are not 4-byte aligned");
  }
  // Versions 1 and 2 start with the magic; legacy files start with dim.
  uint32_t magic = 0;
  if (bytes.size() >= sizeof magic) std::memcpy(&magic, bytes.data(), sizeof magic);
  if (magic == kAk42Magic) return Ak42Reader::parse(bytes, source, std::move(storage));
  if (bytes.size() < static_cast<size_t>(kHeaderBytes)) {
    throw Error(source + ": truncated: header needs " + std::to_string(kHeaderBytes) +
                " bytes, file has " + std::to_string(bytes.size()));
  }
  int32_t header[7];
  std::memcpy(header, bytes.data(), sizeof header);
  if (const std::string f = foreign_format(bytes); !f.empty()) {
    throw Error(source + ": " + f + ", not a llama2.c checkpoint");
  }
  Checkpoint ck;
  ck.file_size_ = static_cast<int64_t>(bytes.size());
  Config& c = ck.model_.config;
  c = Config::from_header(header);
  c.validate(source);

  const int64_t L = c.n_layers, dim = c.dim, kv = c.kv_dim(), hidden = c.hidden_dim;
  // Weights and the two half-size rope tables, after the header.
  const std::string sizes = source + ": file size";
  const int64_t expected_size = checked_add(
      kHeaderBytes,
      checked_mul(
          checked_add(c.parameter_count(), checked_mul(c.seq_len, c.head_size(), sizes), sizes), 4,
          sizes),
      sizes);
  TensorCursor cur(bytes, source, kHeaderBytes, expected_size);
  auto& t = ck.tensors_;
  t.push_back(cur.take("token_embedding", {c.vocab_size, dim}));
  t.push_back(cur.take("rms_att", {L, dim}));
  t.push_back(cur.take("wq", {L, dim, dim}));
  t.push_back(cur.take("wk", {L, kv, dim}));
  t.push_back(cur.take("wv", {L, kv, dim}));
  t.push_back(cur.take("wo", {L, dim, dim}));
  t.push_back(cur.take("rms_ffn", {L, dim}));
  t.push_back(cur.take("w1", {L, hidden, dim}));
  t.push_back(cur.take("w2", {L, dim, hidden}));
  t.push_back(cur.take("w3", {L, hidden, dim}));
  t.push_back(cur.take("rms_final", {dim}));
  // Legacy files carry precomputed rotary tables that run.c ignores.
  const int64_t rope_floats = checked_mul(c.seq_len, c.head_size() / 2, source + ": rope table");
  cur.skip("freq_cis_real", rope_floats);
  cur.skip("freq_cis_imag", rope_floats);
  if (!c.shared_classifier) t.push_back(cur.take("wcls", {c.vocab_size, dim}));

  ck.model_.weights = llama2c_weights(t, c, std::move(storage));
  validate_weights(ck.model_.weights, c, source);
  ck.model_.source = source;
  return ck;
}

int64_t Checkpoint::weight_bytes() const {
  int64_t total = 0;
  for (const TensorInfo& t : tensors_) {
    total += static_cast<int64_t>(t.data.size_bytes());
    for (const QuantizedTensor& q : t.quantized) {
      total += static_cast<int64_t>(q.values.size_bytes() + q.scales.size_bytes());
    }
  }
  return total;
}

const char* to_string(CheckpointFormat format) {
  switch (format) {
    case CheckpointFormat::v1:
      return "version 1 (f32)";
    case CheckpointFormat::v2:
      return "version 2 (Q8_0)";
    default:
      return "legacy version 0 (f32)";
  }
}

}  // namespace llama
