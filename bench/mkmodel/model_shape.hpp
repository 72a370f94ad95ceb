// Named model shapes for llama-mkmodel: the published llama2.c sizes and a
// grouped-query 1B, as Configs ready to write.
#pragma once

#include <string>
#include <vector>

#include "llama/config.hpp"

namespace llama::bench {

struct NamedShape {
  std::string name;  // e.g. "110M"
  Config config;
};

// Every named shape, smallest first.
const std::vector<NamedShape>& named_shapes();

// The shape called `name` (case-insensitive); throws Error listing the known names.
Config shape_by_name(const std::string& name);

}  // namespace llama::bench
