// The exception every app's flag parsing throws for bad usage, so shared
// parsing helpers (parse_seed) can serve llama-cli, llama-compare and the
// bench tools alike.
#pragma once

#include <stdexcept>

namespace llama::cli {

// A bad flag or value; the message names the flag. Apps exit with code 2
// (report_usage_error).
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace llama::cli
