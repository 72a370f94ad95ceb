// What a backend is given: the configuration and weights of one model, whatever
// the file format it came from.
#pragma once

#include <string>

#include "llama/config.hpp"
#include "llama/weights.hpp"

namespace llama {

struct Model {
  std::string source;  // the file or directory it came from, for messages
  Config config;
  ModelWeights weights;  // typed tensor views, one set per layer
};

}  // namespace llama
