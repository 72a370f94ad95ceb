// The exception every app's flag parsing throws for bad usage, so shared
// parsing helpers (parse_seed, the --numerics and --kv-cache values) can serve
// llama-cli, llama-compare and the bench tools alike.
#pragma once

#include <stdexcept>
#include <string>

#include "llama/error.hpp"

namespace llama::cli {

// A bad flag or value; the message names the flag. Apps exit with code 2
// (report_usage_error).
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// parse(text, flag): a core parser of a flag's value (parse_numerics,
// parse_kv_cache), whose Error names `flag`, rethrown as a UsageError.
template <typename Parse>
auto parse_flag_value(Parse parse, const std::string& text, const char* flag) {
  try {
    return parse(text, flag);
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
}

}  // namespace llama::cli
