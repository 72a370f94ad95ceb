// --kv-cache for every app that runs a model (kv_cache_flag.hpp).
#include "kv_cache_flag.hpp"

#include "usage_error.hpp"

namespace llama::cli {

void add_kv_cache_flag(boost::program_options::options_description& desc, std::string& value) {
  desc.add_options()(
      "kv-cache",
      boost::program_options::value(&value)->default_value("default")->value_name("f32|f16"),
      "KV cache element type: f16 (llama.cpp's -ctk/-ctv f16: half the memory, attention "
      "rounding q and p to f16 as ggml does) or f32; default: the format's reference (GGUF "
      "f16, llama2.c and Hugging Face f32)");
}

KvCacheOption parse_kv_cache_flag(const std::string& text) {
  return parse_flag_value(parse_kv_cache, text, "--kv-cache");
}

}  // namespace llama::cli
