// llama-compare's command line: parsing and validation into CompareOptions.
#pragma once

#include <string>
#include <vector>

#include "generation_flags.hpp"
#include "llama/kv_cache.hpp"
#include "llama/numerics.hpp"

namespace llama::compare {

enum class OutputFormat { text, json };

struct CompareOptions {
  bool help = false;
  bool version = false;
  bool list_backends = false;
  std::vector<std::string> plugins;   // --plugin FILE, in order
  cli::GenerationFlags run;           // checkpoint, tokenizer, prompt, sampling, steps, threads
  std::vector<std::string> backends;  // specs; the first is the baseline
  std::vector<Numerics> numerics;     // one per backend (--numerics: one for all, or a list)
  std::vector<KvCacheOption> kv_cache;  // one per backend (--kv-cache: one for all, or a list)
  double tolerance = 1e-4;            // on the relative logit difference
  OutputFormat format = OutputFormat::text;
  std::string help_text;
};

// Throws cli::UsageError naming the flag.
CompareOptions parse_compare(const std::vector<std::string>& args);

}  // namespace llama::compare
