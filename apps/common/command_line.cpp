// parse_command_line and help_text: the one place the apps call Boost's parser.
#include "command_line.hpp"

#include <boost/program_options/parsers.hpp>
#include <sstream>

#include "usage_error.hpp"
#include "usage_message.hpp"

namespace llama::cli {

namespace po = boost::program_options;

po::variables_map parse_command_line(const po::options_description& desc,
                                     const std::vector<std::string>& args,
                                     const po::positional_options_description* positional) {
  po::variables_map vm;
  try {
    po::command_line_parser parser(args);
    parser.options(desc);
    if (positional != nullptr) parser.positional(*positional);
    po::store(parser.run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw UsageError(usage_message(e, args));
  }
  return vm;
}

std::string help_text(const po::options_description& desc) {
  std::ostringstream help;
  help << desc;
  return help.str();
}

}  // namespace llama::cli
