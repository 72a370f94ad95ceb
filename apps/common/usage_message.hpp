// The text of a Boost.Program_options error, without Boost's placeholder hang.
#pragma once

#include <boost/program_options/errors.hpp>
#include <string>
#include <vector>

namespace llama::cli {

// e.what(), except when an argument contains '%': Boost 1.74 fills "%value%"-
// style placeholders with the user's text in a loop that never ends when that
// text holds a placeholder itself (`-t %value%` hung llama-cli, found by
// fuzz/fuzz_cli_args). Then the message names the option without quoting it.
std::string usage_message(const boost::program_options::error& e,
                          const std::vector<std::string>& args);

}  // namespace llama::cli
