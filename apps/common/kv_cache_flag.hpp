// --kv-cache f32|f16|default, declared and parsed the same way by every app
// that runs a model (llama-cli, llama-compare, llama-perplexity, llama-bench):
// the value goes into BackendOptions::kv_cache (llama/kv_cache.hpp).
#pragma once

#include <boost/program_options.hpp>
#include <string>

#include "llama/kv_cache.hpp"

namespace llama::cli {

// Declares --kv-cache on `desc`, its text into `value` (default "default").
void add_kv_cache_flag(boost::program_options::options_description& desc, std::string& value);

// The option `text` names; throws UsageError naming --kv-cache otherwise.
KvCacheOption parse_kv_cache_flag(const std::string& text);

}  // namespace llama::cli
