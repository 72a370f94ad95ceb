// export.py's three layouts (legacy_export, version1_export, version2_export),
// written from any loaded checkpoint.
#include "llama/formats/llama2c_writer.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "llama/error.hpp"
#include "llama/kernels/products/llama2c_int8.hpp"
#include "llama/kernels/steps/rope.hpp"

namespace llama {
namespace {

class Writer {
 public:
  Writer(const Checkpoint& in, std::ostream& out, const std::string& destination)
      : in_(in), out_(out), destination_(destination) {}

  template <typename T>
  void raw(std::span<const T> values) {
    out_.write(reinterpret_cast<const char*>(values.data()),
               static_cast<std::streamsize>(values.size_bytes()));
    if (!out_) throw Error(destination_ + ": write failed");
    bytes_ += static_cast<int64_t>(values.size_bytes());
  }
  template <typename T>
  void value(const T& v) {
    raw(std::span<const T>(&v, 1));
  }
  void pad_to(int64_t size) {
    const std::vector<std::byte> zeros(static_cast<size_t>(size - bytes_));
    raw(std::span<const std::byte>(zeros));
  }

  const TensorInfo& tensor(const std::string& name) const {
    for (const TensorInfo& t : in_.tensors()) {
      if (t.name == name) return t;
    }
    throw Error(in_.model().source + ": no tensor " + name);
  }
  int64_t layers_of(const TensorInfo& t) const {
    return t.shape.size() == 3 || (t.name.rfind("rms_", 0) == 0 && t.shape.size() == 2) ? t.shape[0]
                                                                                        : 1;
  }

  // Layer `l` of tensor `name` in f32 (dequantized from Q8_0 when needed).
  std::span<const float> f32(const std::string& name, int64_t l) {
    const TensorInfo& t = tensor(name);
    if (t.quantized.empty()) {
      const size_t per = t.data.size() / static_cast<size_t>(layers_of(t));
      return t.data.subspan(static_cast<size_t>(l) * per, per);
    }
    const QuantizedTensor& q = t.quantized[static_cast<size_t>(l)];
    scratch_.resize(q.values.size());
    dequantize(q, scratch_);
    return scratch_;
  }
  // Every layer of tensor `name` in f32, one after another.
  void write_f32(const std::string& name) {
    const TensorInfo& t = tensor(name);
    for (int64_t l = 0; l < layers_of(t); ++l) raw(f32(name, l));
  }
  // Every layer of tensor `name` as Q8_0: values then scales, layer by layer.
  TensorQuantization write_q8(const std::string& name, int64_t gs) {
    const TensorInfo& t = tensor(name);
    TensorQuantization report{name, 0.0f, false};
    for (int64_t l = 0; l < layers_of(t); ++l) {
      if (!t.quantized.empty() && t.quantized[static_cast<size_t>(l)].group_size == gs) {
        raw(t.quantized[static_cast<size_t>(l)].values);
        raw(t.quantized[static_cast<size_t>(l)].scales);
        report.copied = true;
        continue;
      }
      const std::span<const float> w = f32(name, l);
      std::vector<int8_t> values(w.size());
      std::vector<float> scales(w.size() / static_cast<size_t>(gs));
      report.max_error = std::max(report.max_error, quantize_q80(w, gs, values, scales));
      raw(std::span<const int8_t>(values));
      raw(std::span<const float>(scales));
    }
    return report;
  }

  int64_t bytes() const { return bytes_; }

 private:
  const Checkpoint& in_;
  std::ostream& out_;
  const std::string& destination_;
  int64_t bytes_ = 0;
  std::vector<float> scratch_;  // f32 [rows, cols] one dequantized layer
};

void write_header7(Writer& w, const Config& c, bool negative_vocab_if_separate) {
  const int32_t vocab = static_cast<int32_t>(c.vocab_size);
  const int32_t h[7] = {static_cast<int32_t>(c.dim),
                        static_cast<int32_t>(c.hidden_dim),
                        static_cast<int32_t>(c.n_layers),
                        static_cast<int32_t>(c.n_heads),
                        static_cast<int32_t>(c.n_kv_heads),
                        negative_vocab_if_separate && !c.shared_classifier ? -vocab : vocab,
                        static_cast<int32_t>(c.seq_len)};
  w.raw(std::span<const int32_t>(h));
}

// llama2.c's precompute_freqs_cis in f32: cos/sin of pos * 10000^(-2i/head_size)
// (the core's RoPE table of a llama2.c config), f32 [seq_len, head_size / 2] each.
void write_rope_tables(Writer& w, const Config& c) {
  const RopeTable rope(c);
  std::vector<float> cos_row(static_cast<size_t>(rope.pairs()));
  std::vector<float> sin_row(cos_row.size());
  for (const bool cosine : {true, false}) {
    for (int64_t pos = 0; pos < c.seq_len; ++pos) {
      rope.angles(pos, cos_row, sin_row);
      w.raw(std::span<const float>(cosine ? cos_row : sin_row));
    }
  }
}

// llama2.c's files hold the seven header fields; run.c implies the rest. A
// model that differs in anything run.c computes with cannot be written.
void require_llama2c_shape(const Config& c, const std::string& destination) {
  std::string why;
  if (c.head_dim * c.n_heads != c.dim) {
    why = "head_dim " + std::to_string(c.head_dim) + " is not dim / n_heads";
  } else if (c.rope_theta != 10000.0) {
    why = "rope_theta is not 10000";
  } else if (c.rope_scaling.type != RopeScalingType::none) {
    why = std::string("rope scaling ") + to_string(c.rope_scaling.type) + " is not none";
  } else if (c.norm_eps != 1e-5) {
    why = "norm_eps is not 1e-5";
  } else if (c.rope_layout != RopeLayout::interleaved) {
    why = "q/k rows are laid out for rotate_half, not llama2.c's interleaved pairs";
  }
  if (!why.empty()) {
    throw Error(destination + ": a llama2.c checkpoint cannot hold this model: " + why);
  }
}

void write_v0(Writer& w, const Checkpoint& in) {
  const Config& c = in.config();
  write_header7(w, c, true);
  for (const char* name : {"token_embedding", "rms_att", "wq", "wk", "wv", "wo", "rms_ffn", "w1",
                           "w2", "w3", "rms_final"}) {
    w.write_f32(name);
  }
  if (in.format() == CheckpointFormat::v0) {
    // The source's own tables, so that a version 0 file converts to itself.
    const int64_t rope = c.seq_len * (c.head_size() / 2) * 2;
    // They follow rms_final in the file; the loader checked they are there.
    const TensorInfo& last = w.tensor("rms_final");
    w.raw(std::span<const float>(last.data.data() + last.data.size(), static_cast<size_t>(rope)));
  } else {
    write_rope_tables(w, c);
  }
  if (!c.shared_classifier) w.write_f32("wcls");
}

void write_ak42_header(Writer& w, const Config& c, int32_t version) {
  w.value(Checkpoint::kAk42Magic);
  w.value(version);
  write_header7(w, c, false);
  w.value(static_cast<uint8_t>(c.shared_classifier ? 1 : 0));
}

void write_v1(Writer& w, const Config& c) {
  write_ak42_header(w, c, 1);
  w.pad_to(Checkpoint::kAk42HeaderBytes);
  for (const char* name : {"rms_att", "rms_ffn", "rms_final", "token_embedding", "wq", "wk", "wv",
                           "wo", "w1", "w2", "w3"}) {
    w.write_f32(name);
  }
  if (!c.shared_classifier) w.write_f32("wcls");
}

void write_v2(Writer& w, const Config& c, int64_t gs, WriteReport& report) {
  write_ak42_header(w, c, 2);
  w.value(static_cast<int32_t>(gs));  // at byte 37, unaligned, as struct.pack('i') leaves it
  w.pad_to(Checkpoint::kAk42HeaderBytes);
  for (const char* name : {"rms_att", "rms_ffn", "rms_final"}) w.write_f32(name);
  for (const char* name : {"token_embedding", "wq", "wk", "wv", "wo", "w1", "w2", "w3"}) {
    report.quantized.push_back(w.write_q8(name, gs));
  }
  if (!c.shared_classifier) report.quantized.push_back(w.write_q8("wcls", gs));
}

}  // namespace

int64_t q80_group_size(const Config& c, int64_t requested, std::vector<std::string>* backoffs) {
  if (requested <= 0) {
    throw Error("group size must be positive, got " + std::to_string(requested));
  }
  int64_t gs = requested;
  for (const auto& [n, what] : {std::pair{c.dim, "dim"}, std::pair{c.hidden_dim, "hidden_dim"}}) {
    while (n % gs != 0) {
      gs /= 2;
      if (backoffs) {
        backoffs->push_back("BACKOFF: reducing group size to " + std::to_string(gs) + " to fit " +
                            what + " " + std::to_string(n));
      }
    }
  }
  return gs;
}

WriteReport write_checkpoint(const Checkpoint& in, const WriteOptions& options, std::ostream& out,
                             const std::string& destination) {
  require_llama2c_shape(in.config(), destination);
  WriteReport report;
  Writer w(in, out, destination);
  switch (options.format) {
    case CheckpointFormat::v0:
      write_v0(w, in);
      break;
    case CheckpointFormat::v1:
      write_v1(w, in.config());
      break;
    case CheckpointFormat::v2:
      report.group_size = q80_group_size(in.config(), options.group_size, &report.backoffs);
      write_v2(w, in.config(), report.group_size, report);
      break;
  }
  out.flush();
  if (!out) throw Error(destination + ": write failed");
  report.bytes = w.bytes();
  return report;
}

}  // namespace llama
