// llama-mkmodel's command line: a named shape and/or explicit dimensions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "usage_error.hpp"

#include "llama/config.hpp"

namespace llama::bench {

enum class MkmodelAction { write, help, version, list_shapes };

struct MkmodelOptions {
  MkmodelAction action = MkmodelAction::write;
  std::string output;
  Config config;  // validated
  uint64_t seed = 42;
  std::string help_text;
};

// A bad flag or value; the message names the flag. Exit code 2. A
// cli::UsageError, as the shared flag helpers (cli::parse_seed) throw.
class MkmodelUsageError : public cli::UsageError {
 public:
  using cli::UsageError::UsageError;
};

// Throws cli::UsageError (a MkmodelUsageError, or cli::parse_seed's) naming the flag.
MkmodelOptions parse_mkmodel_options(const std::vector<std::string>& args);

}  // namespace llama::bench
