// libFuzzer target: parse_hf_config and apply_generation_config on arbitrary
// text. A config it accepts must be one the forward pass can run (positive
// sizes, heads that divide, even head_dim, ids inside the vocabulary) and give
// tensor shapes whose sizes fit in 64 bits.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "fuzz_check.hpp"
#include "llama/error.hpp"
#include "llama/formats/hf_checkpoint.hpp"
#include "llama/formats/hf_config.hpp"

namespace {

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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    check_config(llama::parse_hf_config(text, "config.json"));
  } catch (const llama::Error& e) {
    FUZZ_CHECK(std::strncmp(e.what(), "config.json: ", 13) == 0, "error does not name the file");
  }
  llama::HfConfig base = llama::parse_hf_config(
      R"({"model_type": "llama", "hidden_size": 8, "intermediate_size": 12, "num_hidden_layers": 1,
          "num_attention_heads": 2, "vocab_size": 300})",
      "base");
  try {
    llama::apply_generation_config(base, text, "generation_config.json");
    check_config(base);
  } catch (const llama::Error& e) {
    FUZZ_CHECK(std::strncmp(e.what(), "generation_config.json: ", 24) == 0,
               "error does not name the file");
  }
  return 0;
}
