// llama-bench as a whole: parse, measure rooflines, run each configuration
// in a child, report. Returns the exit code.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace llama::bench {

int run_bench(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace llama::bench
