// How every app reports failure: one line on stderr, "<program>: <why>", and
// an exit code (1 for errors, 2 for bad usage).
#pragma once

#include <functional>
#include <new>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>

#include "llama/error.hpp"

namespace llama::cli {

// `message` with control bytes escaped as \xNN: errors echo what the user
// gave (flags, paths), and the message must stay one line.
std::string one_line(std::string_view message);

// Writes "<program>: <why> (see --help)" and returns 2.
int report_usage_error(std::string_view program, std::ostream& err, std::string_view why);

// Runs `action` and returns its exit code; llama::Error, filesystem errors,
// std::bad_alloc and any other std::exception become one line on `err` and 1.
int run_reporting_errors(std::string_view program, std::ostream& err,
                         const std::function<int()>& action);

// Runs one stage of an app's work and returns what it returns; a std::bad_alloc
// inside becomes Error "out of memory while <doing>", so the app's line names the
// file or step that ran out ("llama-cli: out of memory while reading model.gguf")
// rather than only "out of memory". An app's run function wraps each stage; nested
// stages leave the innermost name. The state is the call stack: nothing global.
template <class Action>
decltype(auto) during(const std::string& doing, Action&& action) {
  try {
    return std::forward<Action>(action)();
  } catch (const std::bad_alloc&) {
    // Unwinding has freed what the stage held, so the message can be built.
    throw Error("out of memory while " + doing);
  }
}

}  // namespace llama::cli
