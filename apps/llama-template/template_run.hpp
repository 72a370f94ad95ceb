// llama-template's command line and action, writing to given streams so tests
// and fuzzers can drive it.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace llama::chat_app {

// Runs llama-template with `args` (without the program name). Returns the
// exit code: 0 rendered, 1 the template failed or refused the conversation
// (one line on `err`), 2 bad usage.
int run_template(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace llama::chat_app
