// libFuzzer target: a fuzzed config.json bound to a fixed tiny set of tensors,
// and apply_generation_config on the same text. A config parse_hf_config accepts
// must be one the forward pass can run (positive sizes, heads that divide, even
// head_dim, ids inside the vocabulary) and give tensor shapes whose sizes fit in
// 64 bits; HfCheckpoint::bind then accepts it with every tensor matching its spec,
// or refuses it naming config.json or model.safetensors; so does the same config
// with each size in turn at its maximum. Whatever the outcome, the heap never
// holds more than a small bound (HeapMeter): a size the config claims
// (num_hidden_layers 2^31 - 1) must be checked against the tensors before
// anything is allocated for it.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.hpp"
#include "heap_meter.hpp"
#include "llama/error.hpp"
#include "llama/formats/hf_checkpoint.hpp"
#include "llama/formats/hf_config.hpp"
#include "llama/formats/hf_model.hpp"
#include "llama/formats/safetensors_writer.hpp"

namespace {

// The "llama" seed's shape (fuzz/seed_corpus.cpp): its tensors are the fixed set.
constexpr std::string_view kTinyConfig =
    R"({"model_type": "llama", "hidden_size": 8, "intermediate_size": 12, "num_hidden_layers": 1,
        "num_attention_heads": 2, "num_key_value_heads": 1, "vocab_size": 10,
        "max_position_embeddings": 16, "tie_word_embeddings": false})";

// Parsing JSON of n bytes takes a DOM of at most ~20n bytes (an empty object per
// 7 bytes of `"a":{},`); the tensor table is fixed. kParseHeapBound + 64n leaves room
// for both and is a thousandth of what num_hidden_layers 100000000 took.

struct TinyTensors {
  std::vector<std::byte> file;  // the safetensors bytes the model views
  std::shared_ptr<const llama::SafetensorsModel> model;
};

const TinyTensors& tiny_tensors() {
  static const TinyTensors tiny = [] {
    TinyTensors t;
    const llama::HfConfig c = llama::parse_hf_config(kTinyConfig, "tiny config.json");
    const std::vector<llama::HfTensorSpec> specs = llama::hf_tensor_specs(c);
    std::vector<std::vector<std::byte>> data;
    std::vector<llama::SafetensorsOutput> out;
    data.reserve(specs.size());  // the spans below stay valid
    for (const llama::HfTensorSpec& s : specs) {
      size_t n = 4;
      for (int64_t d : s.shape) n *= static_cast<size_t>(d);
      out.push_back({s.name, llama::SafetensorsDtype::F32, s.shape, data.emplace_back(n)});
    }
    std::ostringstream bytes;
    llama::write_safetensors(bytes, out, {}, "tiny");
    const std::string s = bytes.str();
    t.file.resize(s.size());
    std::memcpy(t.file.data(), s.data(), s.size());
    t.model = std::make_shared<const llama::SafetensorsModel>(llama::SafetensorsModel::from_file(
        llama::SafetensorsFile::parse(t.file, "model.safetensors", nullptr)));
    return t;
  }();
  return tiny;
}

void check_config(const llama::HfConfig& c) {
  FUZZ_CHECK(c.hidden_size > 0 && c.intermediate_size > 0 && c.num_hidden_layers > 0 &&
                 c.num_attention_heads > 0 && c.num_key_value_heads > 0 && c.head_dim > 0 &&
                 c.vocab_size > 0 && c.max_position_embeddings > 0,
             "a size is not positive");
  FUZZ_CHECK(c.num_attention_heads % c.num_key_value_heads == 0, "kv heads do not divide heads");
  FUZZ_CHECK(c.head_dim % 2 == 0, "odd head_dim");
  FUZZ_CHECK(c.rms_norm_eps >= 0 && c.rope_theta > 0, "eps or theta out of range");
  if (c.bos_token_id) FUZZ_CHECK(*c.bos_token_id >= 0 && *c.bos_token_id < c.vocab_size, "bos id");
  for (int64_t id : c.eos_token_ids) FUZZ_CHECK(id >= 0 && id < c.vocab_size, "eos id");
  if (c.rope_scaling.type == llama::HfRopeType::llama3) {
    FUZZ_CHECK(c.rope_scaling.high_freq_factor > c.rope_scaling.low_freq_factor, "llama3 factors");
  }
  // Layers stay few in the specs walk: a config with 2^31 layers is valid but slow to list.
  if (c.num_hidden_layers <= 64) {
    for (const llama::HfTensorSpec& s : llama::hf_tensor_specs(c)) {
      int64_t n = 1;
      for (int64_t d : s.shape) FUZZ_CHECK(!__builtin_mul_overflow(n, d, &n), "shape overflows");
    }
  }
  (void)llama::describe(c);
}

bool starts_with(const char* s, std::string_view prefix) {
  return std::strncmp(s, prefix.data(), prefix.size()) == 0;
}

// The config against the tiny tensors: refused naming a file, or every tensor bound.
void bind(const llama::HfConfig& c) {
  llama::HfPaths paths;
  paths.config = "config.json";
  paths.weights = "model.safetensors";
  try {
    const llama::HfCheckpoint ck = llama::HfCheckpoint::bind(paths, c, tiny_tensors().model);
    for (const llama::HfTensor& t : ck.tensors()) {
      FUZZ_CHECK(t.tensor != nullptr && t.tensor->shape == t.spec.shape,
                 "bound a tensor unchecked");
    }
    (void)llama::hf_model_config(ck.config(), "config.json", 0);
  } catch (const llama::Error& e) {
    FUZZ_CHECK(
        starts_with(e.what(), "config.json: ") || starts_with(e.what(), "model.safetensors: "),
        "a bind error names neither file");
  }
}

// Each size of an accepted config at parse_hf_config's maximum: what a hostile
// config.json can claim. bind must refuse (or accept) it within the same bound, so
// a size used before it is checked against the tensors fails here on every input
// that parses, not only on the rare mutation that makes a size huge and keeps the
// rest valid.
void bind_with_each_size_at_its_maximum(const llama::HfConfig& c) {
  constexpr int64_t kMax = 2147483647;  // parse_hf_config's limit on every size
  for (int64_t llama::HfConfig::*size :
       {&llama::HfConfig::num_hidden_layers, &llama::HfConfig::vocab_size,
        &llama::HfConfig::hidden_size, &llama::HfConfig::intermediate_size,
        &llama::HfConfig::num_attention_heads, &llama::HfConfig::num_key_value_heads,
        &llama::HfConfig::head_dim, &llama::HfConfig::max_position_embeddings}) {
    llama::HfConfig big = c;
    big.*size = kMax;
    bind(big);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)tiny_tensors();  // built once, outside the meter
  const fuzz::HeapMeter meter(fuzz::kParseHeapBound + fuzz::kParseHeapPerByte * size,
                              "config.json parsed and bound to 12 tensors");
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const llama::HfConfig c = llama::parse_hf_config(text, "config.json");
    check_config(c);
    bind(c);
    bind_with_each_size_at_its_maximum(c);
  } catch (const llama::Error& e) {
    FUZZ_CHECK(starts_with(e.what(), "config.json: "), "error does not name the file");
  }
  llama::HfConfig base = llama::parse_hf_config(kTinyConfig, "base");
  try {
    llama::apply_generation_config(base, text, "generation_config.json");
    check_config(base);
  } catch (const llama::Error& e) {
    FUZZ_CHECK(starts_with(e.what(), "generation_config.json: "), "error does not name the file");
  }
  return 0;
}
