// Parsing a command line with Boost.Program_options the way every app does: its errors
// become cli::UsageError (exit 2) with usage_message's text, and --help prints the
// description's text.
#pragma once

#include <boost/program_options/options_description.hpp>
#include <boost/program_options/positional_options.hpp>
#include <boost/program_options/variables_map.hpp>
#include <string>
#include <vector>

namespace llama::cli {

// `args` (without the program name) parsed and notified against `desc` (and `positional`
// when given); a Boost error (unknown flag, bad value, missing argument) is thrown as
// UsageError with usage_message's one line.
boost::program_options::variables_map parse_command_line(
    const boost::program_options::options_description& desc, const std::vector<std::string>& args,
    const boost::program_options::positional_options_description* positional = nullptr);

// What --help prints: the description's flags and their help, as Boost lays them out.
std::string help_text(const boost::program_options::options_description& desc);

}  // namespace llama::cli
