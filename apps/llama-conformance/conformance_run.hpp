// llama-conformance: runs the conformance suite on backend specs and reports.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace llama::conformance {

// Exit codes: 0 every backend passes every check, 1 a check failed or an error (one line
// on `err`), 2 bad usage (an unknown backend included).
int run_conformance(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace llama::conformance
