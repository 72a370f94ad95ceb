// llama-cli's actions, writing to given streams so tests and fuzzers can drive them.
#pragma once

#include <istream>
#include <ostream>
#include <string>
#include <vector>

namespace llama::cli {

// Runs llama-cli with `args` (without the program name). Returns the exit
// code: 0 success, 1 error (one line on `err`), 2 bad usage.
int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
// The same with standard input replaced by `in` (chat mode's user lines);
// the overload above reads std::cin.
int run_cli(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
            std::ostream& err);

}  // namespace llama::cli
