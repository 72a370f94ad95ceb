// llama-perplexity's command line and action, writing to given streams so
// tests can drive it.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace llama::perplexity_app {

// Runs llama-perplexity with `args` (without the program name). Returns the
// exit code: 0 success, 1 error (one line on `err`), 2 bad usage. Progress
// goes to `err`; with `progress_on_tty` one line rewritten in place.
int run_perplexity(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
                   bool progress_on_tty = false);

}  // namespace llama::perplexity_app
