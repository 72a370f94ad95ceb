// Versions 1 and 2 of llama2.c's export.py: a 256-byte "ak42" header, then
// version 1: every tensor in f32 (norms first); version 2: the norms in f32,
// then each matrix as int8 values followed by its f32 group scales, one layer
// after another. Every offset is checked before a view is made.
#include <algorithm>
#include <cstring>
#include <vector>

#include "checkpoint_ak42.hpp"
#include "llama/checked_math.hpp"
#include "llama/error.hpp"
#include "llama2c_weights.hpp"

namespace llama {
namespace {

constexpr int64_t kSharedFlagOffset = 36;  // uint8
constexpr int64_t kGroupSizeOffset = 37;   // int32, unaligned (struct.pack('i') after 'B')

// The mapping plus what loading had to copy: scales that are not 4-byte
// aligned in the file.
struct Ak42Storage {
  std::shared_ptr<const void> mapping;
  std::vector<std::vector<float>> copies;
};

// Hands out consecutive regions of the file, refusing any past its end.
class Cursor {
 public:
  Cursor(std::span<const std::byte> bytes, const std::string& source, int64_t offset,
         Ak42Storage& storage)
      : bytes_(bytes), source_(source), offset_(offset), storage_(storage) {}

  int64_t offset() const { return offset_; }

  std::span<const float> floats(const std::string& what, int64_t count) {
    const int64_t at = advance(what, count, 4);
    const std::byte* p = bytes_.data() + at;
    if (reinterpret_cast<uintptr_t>(p) % alignof(float) != 0) {
      // An odd group size can leave scales unaligned; views need aligned floats.
      auto& copy = storage_.copies.emplace_back(static_cast<size_t>(count));
      std::memcpy(copy.data(), p, static_cast<size_t>(count) * 4);
      return copy;
    }
    return {reinterpret_cast<const float*>(p), static_cast<size_t>(count)};
  }

  std::span<const int8_t> int8s(const std::string& what, int64_t count) {
    const int64_t at = advance(what, count, 1);
    return {reinterpret_cast<const int8_t*>(bytes_.data() + at), static_cast<size_t>(count)};
  }

  TensorInfo f32(const std::string& name, std::vector<int64_t> shape) {
    const int64_t at = offset_;
    const std::span<const float> data = floats("tensor " + name, count_of(name, shape));
    return {name, std::move(shape), at, data, {}};
  }

  // A Q8_0 tensor: `layers` consecutive [rows, cols] matrices (layers 0: one
  // matrix without a layer dimension), each as its values then its scales.
  TensorInfo q8(const std::string& name, int64_t layers, int64_t rows, int64_t cols,
                int64_t group_size) {
    std::vector<int64_t> shape = {rows, cols};
    if (layers > 0) shape.insert(shape.begin(), layers);
    TensorInfo t{name, shape, offset_, {}, {}};
    const int64_t count = count_of(name, {rows, cols});
    for (int64_t l = 0; l < std::max<int64_t>(layers, 1); ++l) {
      std::string what = "tensor ";
      what += name;
      if (layers > 0) what.append("[").append(std::to_string(l)).append("]");
      const auto values = int8s(what + " values", count);
      const auto scales = floats(what + " scales", count / group_size);
      t.quantized.push_back({values, scales, group_size});
    }
    return t;
  }

 private:
  int64_t count_of(const std::string& name, const std::vector<int64_t>& shape) const {
    int64_t count = 1;
    for (int64_t d : shape) count = checked_mul(count, d, source_ + ": tensor " + name);
    return count;
  }

  int64_t advance(const std::string& what, int64_t count, int64_t elem_bytes) {
    const int64_t bytes = checked_mul(count, elem_bytes, source_ + ": " + what);
    const int64_t end = checked_add(offset_, bytes, source_ + ": " + what);
    const auto size = static_cast<int64_t>(bytes_.size());
    if (end > size) {
      throw Error(source_ + ": truncated: " + what + " at offset " + std::to_string(offset_) +
                  " needs bytes up to " + std::to_string(end) + ", file has " +
                  std::to_string(size));
    }
    const int64_t at = offset_;
    offset_ = end;
    return at;
  }

  std::span<const std::byte> bytes_;
  const std::string& source_;
  int64_t offset_;
  Ak42Storage& storage_;
};

int32_t read_i32(std::span<const std::byte> bytes, int64_t offset) {
  int32_t v = 0;
  std::memcpy(&v, bytes.data() + offset, sizeof v);
  return v;
}

// The group size must split every row (length dim or hidden_dim) into whole
// groups: runq.c computes n / group_size groups per row and silently ignores
// the rest.
void check_group_size(const Config& c, int64_t gs, const std::string& source) {
  if (gs <= 0) {
    throw Error(source + ": header field group_size (offset 37) is " + std::to_string(gs) +
                ", must be positive");
  }
  for (const auto& [n, field] : {std::pair{c.dim, "dim"}, std::pair{c.hidden_dim, "hidden_dim"}}) {
    if (n % gs != 0) {
      throw Error(source + ": header field group_size (offset 37) is " + std::to_string(gs) +
                  ", which does not divide " + field + " " + std::to_string(n) +
                  ": rows would end in a partial group, which runq.c silently drops");
    }
  }
}

}  // namespace

Checkpoint Ak42Reader::parse(std::span<const std::byte> bytes, const std::string& source,
                             std::shared_ptr<const void> storage) {
  const auto size = static_cast<int64_t>(bytes.size());
  const int32_t version = size >= 8 ? read_i32(bytes, 4) : -1;
  if (size < 8 || (version != 1 && version != 2)) {
    if (size < 8) {
      throw Error(source + ": truncated: \"ak42\" header needs " +
                  std::to_string(Checkpoint::kAk42HeaderBytes) + " bytes, file has " +
                  std::to_string(size));
    }
    throw Error(source + ": unsupported checkpoint version " + std::to_string(version) +
                " (header field version at offset 4, after the \"ak42\" magic; known: 1 f32, "
                "2 Q8_0)");
  }
  // Every later message says which format the file claimed to be.
  const std::string where = source + ": version " + std::to_string(version) + " checkpoint";
  if (size < Checkpoint::kAk42HeaderBytes) {
    throw Error(where + ": truncated: header needs " +
                std::to_string(Checkpoint::kAk42HeaderBytes) + " bytes, file has " +
                std::to_string(size));
  }
  int32_t header[7];
  std::memcpy(header, bytes.data() + 8, sizeof header);
  if (header[5] <= 0) {
    throw Error(where + ": header field vocab_size (offset 28) is " + std::to_string(header[5]) +
                ", must be positive (versions 1 and 2 flag a shared classifier at offset 36)");
  }
  const auto shared = static_cast<uint8_t>(bytes[kSharedFlagOffset]);
  if (shared > 1) {
    throw Error(where + ": header field shared_classifier (offset 36) is " +
                std::to_string(shared) + ", must be 0 or 1");
  }
  Checkpoint ck;
  ck.file_size_ = size;
  ck.format_ = version == 1 ? CheckpointFormat::v1 : CheckpointFormat::v2;
  Config& c = ck.model_.config;
  c = Config::from_header(header);
  c.shared_classifier = shared == 1;
  c.validate(where);
  const int64_t gs = version == 2 ? read_i32(bytes, kGroupSizeOffset) : 0;
  if (version == 2) check_group_size(c, gs, where);

  auto owned = std::make_shared<Ak42Storage>();
  owned->mapping = std::move(storage);
  const int64_t L = c.n_layers, dim = c.dim, kv = c.kv_dim(), hidden = c.hidden_dim;
  Cursor cur(bytes, where, Checkpoint::kAk42HeaderBytes, *owned);
  auto& t = ck.tensors_;
  t.push_back(cur.f32("rms_att", {L, dim}));
  t.push_back(cur.f32("rms_ffn", {L, dim}));
  t.push_back(cur.f32("rms_final", {dim}));
  if (version == 1) {
    t.push_back(cur.f32("token_embedding", {c.vocab_size, dim}));
    t.push_back(cur.f32("wq", {L, dim, dim}));
    t.push_back(cur.f32("wk", {L, kv, dim}));
    t.push_back(cur.f32("wv", {L, kv, dim}));
    t.push_back(cur.f32("wo", {L, dim, dim}));
    t.push_back(cur.f32("w1", {L, hidden, dim}));
    t.push_back(cur.f32("w2", {L, dim, hidden}));
    t.push_back(cur.f32("w3", {L, hidden, dim}));
    if (!c.shared_classifier) t.push_back(cur.f32("wcls", {c.vocab_size, dim}));
  } else {
    // Layers interleave values and scales in the file: one view per layer, no
    // copy. The embedding stays int8 too: a row dequantized per token is
    // runq.c's dequantized table row, value for value.
    t.push_back(cur.q8("token_embedding", 0, c.vocab_size, dim, gs));
    t.push_back(cur.q8("wq", L, dim, dim, gs));
    t.push_back(cur.q8("wk", L, kv, dim, gs));
    t.push_back(cur.q8("wv", L, kv, dim, gs));
    t.push_back(cur.q8("wo", L, dim, dim, gs));
    t.push_back(cur.q8("w1", L, hidden, dim, gs));
    t.push_back(cur.q8("w2", L, dim, hidden, gs));
    t.push_back(cur.q8("w3", L, hidden, dim, gs));
    if (!c.shared_classifier) t.push_back(cur.q8("wcls", 0, c.vocab_size, dim, gs));
  }
  ck.group_size_ = gs;
  ck.model_.weights = llama2c_weights(t, c, std::move(owned));
  validate_weights(ck.model_.weights, c, where);
  ck.model_.source = source;
  return ck;
}

}  // namespace llama
