// How every app reports failure: one line on stderr, "<program>: <why>", and
// an exit code (1 for errors, 2 for bad usage).
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <string_view>

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

}  // namespace llama::cli
