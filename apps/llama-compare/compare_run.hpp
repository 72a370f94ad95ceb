// llama-compare's program, writing to given streams so tests can drive it.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace llama::compare {

// Runs llama-compare with `args` (without the program name). Returns the exit
// code: 0 every backend agrees, 1 some differ or an error (one line on
// `err`), 2 bad usage.
int run_compare(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace llama::compare
