// Streams a legacy llama2.c checkpoint: header, then every tensor in file
// order, each drawn from its own counter-based random stream.
#include "checkpoint_writer.hpp"

#include <bit>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <numbers>
#include <vector>

#include "llama/checked_math.hpp"
#include "llama/error.hpp"
#include "llama/formats/llama2c_checkpoint.hpp"

namespace llama::bench {
namespace {

static_assert(std::endian::native == std::endian::little, "llama2.c checkpoints are little-endian");

constexpr int64_t kChunkFloats = int64_t{1} << 20;  // 4 MiB per write

uint64_t mix64(uint64_t z) {  // splitmix64's finaliser
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// How one tensor's values are made.
struct TensorFill {
  enum class Kind { uniform, ones, rope_cos, rope_sin } kind = Kind::uniform;
  double stddev = 0;      // uniform: values in [-a, a], a = stddev * sqrt(3)
  int64_t head_size = 0;  // rope tables: f32 [seq_len, head_size / 2]
};

class FileSink {
 public:
  explicit FileSink(const std::string& path) : path_(path), file_(std::fopen(path.c_str(), "wb")) {
    if (!file_) throw Error(path + ": cannot create: " + std::strerror(errno));
  }
  ~FileSink() {
    if (file_) std::fclose(file_);
  }
  void write(const void* data, size_t bytes) {
    if (std::fwrite(data, 1, bytes, file_) != bytes) {
      throw Error(path_ + ": write failed: " + std::strerror(errno));
    }
  }
  void close() {
    std::FILE* f = file_;
    file_ = nullptr;
    if (std::fflush(f) != 0 || std::fclose(f) != 0) {
      throw Error(path_ + ": write failed: " + std::strerror(errno));
    }
  }

 private:
  std::string path_;
  std::FILE* file_;
};

// Writes `count` floats of tensor number `index`; value i depends only on
// (seed, index, i), so the bytes do not depend on the chunk size.
void write_tensor(FileSink& sink, std::vector<float>& chunk, uint64_t seed, uint64_t index,
                  int64_t count, const TensorFill& fill) {
  const uint64_t stream = mix64(seed ^ mix64(index + 0x632be59bd9b4e019ULL));
  const double a = fill.stddev * std::sqrt(3.0);
  for (int64_t start = 0; start < count; start += kChunkFloats) {
    const int64_t n = std::min(kChunkFloats, count - start);
    for (int64_t j = 0; j < n; ++j) {
      const int64_t i = start + j;
      float v = 1.0f;
      switch (fill.kind) {
        case TensorFill::Kind::uniform: {
          const uint64_t bits = mix64(stream + static_cast<uint64_t>(i) * 0x9e3779b97f4a7c15ULL);
          const double u = (static_cast<double>(bits >> 40) + 0.5) * 0x1p-24;  // (0, 1)
          v = static_cast<float>((2.0 * u - 1.0) * a);
          break;
        }
        case TensorFill::Kind::ones:
          break;
        case TensorFill::Kind::rope_cos:
        case TensorFill::Kind::rope_sin: {
          // run.c's legacy tables: freq_cis[pos, i] = exp(1j * pos * 10000^(-2i/head_size)).
          const int64_t half = fill.head_size / 2;
          const double freq = std::pow(
              10000.0, -2.0 * static_cast<double>(i % half) / static_cast<double>(fill.head_size));
          const double angle = static_cast<double>(i / half) * freq;
          v = static_cast<float>(fill.kind == TensorFill::Kind::rope_cos ? std::cos(angle)
                                                                         : std::sin(angle));
          break;
        }
      }
      chunk[static_cast<size_t>(j)] = v;
    }
    sink.write(chunk.data(), static_cast<size_t>(n) * sizeof(float));
  }
}

void check_header_field(int64_t v, const char* field) {
  if (v > std::numeric_limits<int32_t>::max()) {
    throw Error(std::string(field) + " " + std::to_string(v) +
                " does not fit the checkpoint's int32 header");
  }
}

}  // namespace

WeightScales WeightScales::for_config(const Config& c) {
  const double dim = static_cast<double>(c.dim), hidden = static_cast<double>(c.hidden_dim);
  const double residual = 1.0 / std::sqrt(2.0 * static_cast<double>(c.n_layers));
  WeightScales s;
  s.classifier = kLogitStd / std::sqrt(dim);
  s.embedding = s.classifier;  // shared: the embedding is the classifier
  s.qkv = 1.0 / std::sqrt(dim);
  s.wo = residual / std::sqrt(dim);
  s.w1_w3 = 1.0 / std::sqrt(dim);
  // silu(h1) * h3 with unit-normal h has RMS about 0.6; scale back to ~1.
  s.w2 = residual / (0.6 * std::sqrt(hidden));
  return s;
}

int64_t checkpoint_file_bytes(const Config& c) {
  c.validate("config");
  const std::string what = "checkpoint size";
  int64_t floats = c.parameter_count();
  floats = checked_add(floats, checked_mul(c.seq_len, c.head_size(), what), what);  // rope
  return checked_add(Checkpoint::kHeaderBytes, checked_mul(floats, 4, what), what);
}

void write_random_checkpoint(const std::string& path, const Config& c, uint64_t seed) {
  c.validate(path);
  for (auto [v, field] : {std::pair{c.dim, "dim"},
                          {c.hidden_dim, "hidden_dim"},
                          {c.n_layers, "n_layers"},
                          {c.n_heads, "n_heads"},
                          {c.n_kv_heads, "n_kv_heads"},
                          {c.vocab_size, "vocab_size"},
                          {c.seq_len, "seq_len"}}) {
    check_header_field(v, field);
  }
  (void)checkpoint_file_bytes(c);

  const int64_t L = c.n_layers, dim = c.dim, kv = c.kv_dim(), hidden = c.hidden_dim;
  const WeightScales s = WeightScales::for_config(c);
  using K = TensorFill::Kind;
  struct Entry {
    int64_t count;
    TensorFill fill;
  };
  std::vector<Entry> entries{
      {c.vocab_size * dim, {K::uniform, s.embedding, 0}},  // token_embedding
      {L * dim, {K::ones, 0, 0}},                          // rms_att
      {L * dim * dim, {K::uniform, s.qkv, 0}},             // wq
      {L * kv * dim, {K::uniform, s.qkv, 0}},              // wk
      {L * kv * dim, {K::uniform, s.qkv, 0}},              // wv
      {L * dim * dim, {K::uniform, s.wo, 0}},              // wo
      {L * dim, {K::ones, 0, 0}},                          // rms_ffn
      {L * hidden * dim, {K::uniform, s.w1_w3, 0}},        // w1
      {L * dim * hidden, {K::uniform, s.w2, 0}},           // w2
      {L * hidden * dim, {K::uniform, s.w1_w3, 0}},        // w3
      {dim, {K::ones, 0, 0}},                              // rms_final
      {c.seq_len * (c.head_size() / 2), {K::rope_cos, 0, c.head_size()}},
      {c.seq_len * (c.head_size() / 2), {K::rope_sin, 0, c.head_size()}},
  };
  if (!c.shared_classifier) entries.push_back({c.vocab_size * dim, {K::uniform, s.classifier, 0}});

  const std::string partial = path + ".partial";
  try {
    FileSink sink(partial);
    const int32_t header[7] = {
        static_cast<int32_t>(c.dim),
        static_cast<int32_t>(c.hidden_dim),
        static_cast<int32_t>(c.n_layers),
        static_cast<int32_t>(c.n_heads),
        static_cast<int32_t>(c.n_kv_heads),
        static_cast<int32_t>(c.shared_classifier ? c.vocab_size : -c.vocab_size),
        static_cast<int32_t>(c.seq_len)};
    sink.write(header, sizeof header);
    std::vector<float> chunk(static_cast<size_t>(kChunkFloats));
    for (size_t i = 0; i < entries.size(); ++i) {
      write_tensor(sink, chunk, seed, i, entries[i].count, entries[i].fill);
    }
    sink.close();
    std::error_code ec;
    std::filesystem::rename(partial, path, ec);
    if (ec) throw Error(path + ": cannot rename from " + partial + ": " + ec.message());
  } catch (...) {
    std::error_code ec;
    std::filesystem::remove(partial, ec);
    throw;
  }
}

}  // namespace llama::bench
