// What a backend is given: the configuration and weight views of one checkpoint.
#pragma once

#include <string>

#include "llama/config.hpp"
#include "llama/weights.hpp"

namespace llama {

struct Model {
  std::string source;  // the file it came from, for messages
  Config config;
  TransformerWeights weights;  // flat layout as loaded; backends convert as they like
};

}  // namespace llama
