// llama-convert's command line and action, writing to given streams so tests can drive it.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace llama::convert {

// Runs llama-convert with `args` (without the program name). Returns the exit
// code: 0 success, 1 error (one line on `err`), 2 bad usage.
int run_convert(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace llama::convert
