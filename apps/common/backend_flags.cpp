// --plugin, LLAMA_PLUGIN_PATH, --list-backends and --version for every app.
#include "backend_flags.hpp"

#include <cstring>

#include "llama/plugins/loader.hpp"
#include "llama/registry.hpp"
#include "llama/version.hpp"

namespace po = boost::program_options;

namespace llama::cli {

void add_backend_flags(po::options_description& desc, std::vector<std::string>& plugins) {
  desc.add_options()("plugin", po::value(&plugins)->value_name("FILE")->composing(),
                     "load a backend plugin (repeatable; also every libllama-plugin-*.so in "
                     "the directories of LLAMA_PLUGIN_PATH)")(
      "list-backends", "list backends and wrappers with where each came from, then exit");
}

void load_plugins(const std::vector<std::string>& plugins) {
  load_plugins_from_environment();
  for (const std::string& file : plugins) load_plugin(file);
}

void list_backends(std::ostream& out) {
  const auto& registry = BackendRegistry::instance();
  for (const RegistryEntry& e : registry.entries()) {
    std::string origin = "built in";
    for (const LoadedPlugin& p : registry.plugins()) {
      if (p.file == e.origin) origin = "plugin " + p.name + " (" + p.file + ")";
    }
    out << (e.is_wrapper ? "wrapper " : "backend ") << e.name << "\t" << origin << "\t"
        << e.description << "\n";
  }
}

std::string version_line(std::string_view program) {
  std::string line = std::string(program) + " (llama-backends) " + LLAMA_BACKENDS_VERSION;
  if (std::strcmp(core_version(), LLAMA_BACKENDS_VERSION) != 0) {
    line += std::string(", core library ") + core_version();
  }
  return line;
}

}  // namespace llama::cli
