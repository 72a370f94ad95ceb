// usage_message: Boost's error text, or a placeholder-free one when it could hang.
#include "usage_message.hpp"

#include <algorithm>

namespace llama::cli {

std::string usage_message(const boost::program_options::error& e,
                          const std::vector<std::string>& args) {
  const auto* named = dynamic_cast<const boost::program_options::error_with_option_name*>(&e);
  const bool percent = std::any_of(args.begin(), args.end(), [](const std::string& a) {
    return a.find('%') != std::string::npos;
  });
  if (named == nullptr || !percent) return e.what();  // no substitution, or nothing to loop on
  const std::string option = named->get_option_name();
  return (option.empty() ? std::string("an argument") : "option '" + option + "'") +
         ": unknown flag or invalid value (not quoted: it contains '%')";
}

}  // namespace llama::cli
