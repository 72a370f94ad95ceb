// What every app that takes -b shares: --plugin FILE (repeatable) and --list-backends,
// loading LLAMA_PLUGIN_PATH's plugins and the named ones, and the listing that says
// where each backend came from; and the --version line of every app.
#pragma once

#include <boost/program_options.hpp>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace llama::cli {

// Declares --plugin FILE (repeatable, into `plugins`) and --list-backends on `desc`.
void add_backend_flags(boost::program_options::options_description& desc,
                       std::vector<std::string>& plugins);

// Loads every plugin of LLAMA_PLUGIN_PATH, then each of `plugins` in order; throws
// llama::Error "plugin FILE: why" (an app exits 1).
void load_plugins(const std::vector<std::string>& plugins);

// One line per registry entry: "backend NAME\tORIGIN\tDESCRIPTION", ORIGIN being
// "built in" or "plugin NAME (FILE)".
void list_backends(std::ostream& out);

// "<program> (llama-backends) 0.4.0", the first line of every app's --version.
std::string version_line(std::string_view program);

}  // namespace llama::cli
