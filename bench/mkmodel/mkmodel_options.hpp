// llama-mkmodel's command line: a named shape and/or explicit dimensions.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "llama/config.hpp"

namespace llama::bench {

enum class MkmodelAction { write, help, list_shapes };

struct MkmodelOptions {
  MkmodelAction action = MkmodelAction::write;
  std::string output;
  Config config;  // validated
  uint64_t seed = 42;
  std::string help_text;
};

// A bad flag or value; the message names the flag. Exit code 2.
class MkmodelUsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

MkmodelOptions parse_mkmodel_options(const std::vector<std::string>& args);

}  // namespace llama::bench
