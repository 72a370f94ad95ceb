// The plugin loader: every check of a plugin file before its backends reach the
// registry, in the order a broken file fails them (docs/backends.md, "Plugins").
#include "llama/plugins/loader.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "llama/error.hpp"
#include "llama/plugins/plugin.hpp"
#include "llama/registry.hpp"
#include "shared_object.hpp"

namespace fs = std::filesystem;

namespace llama {
namespace {

constexpr const char* kPluginPrefix = "libllama-plugin-";
constexpr const char* kPluginSuffix = ".so";

std::string one_line(const char* text) {
  std::string s = text != nullptr ? text : "unknown error";
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s;
}

// Captures registrations from the plugin's static initializers while it loads and
// runs, and always stops capturing.
class CaptureScope {
 public:
  explicit CaptureScope(PluginRegistrar& into) {
    BackendRegistry::instance().capture_registrations(&into);
  }
  ~CaptureScope() { BackendRegistry::instance().capture_registrations(nullptr); }
  CaptureScope(const CaptureScope&) = delete;
  CaptureScope& operator=(const CaptureScope&) = delete;
};

const llama_plugin_descriptor& entry_descriptor(void* handle) {
  dlerror();
  void* symbol = dlsym(handle, LLAMA_PLUGIN_ENTRY_SYMBOL);
  if (symbol == nullptr) {
    throw Error("no " LLAMA_PLUGIN_ENTRY_SYMBOL
                " symbol: not a llama-backends plugin (see LLAMA_PLUGIN in "
                "llama/plugins/plugin.hpp)");
  }
  using Entry = const llama_plugin_descriptor* (*)();
  const llama_plugin_descriptor* d = reinterpret_cast<Entry>(symbol)();
  if (d == nullptr) throw Error(LLAMA_PLUGIN_ENTRY_SYMBOL " returned no descriptor");
  return *d;
}

void check_descriptor(const llama_plugin_descriptor& d) {
  if (d.protocol != LLAMA_PLUGIN_PROTOCOL) {
    throw Error("built for plugin protocol " + std::to_string(d.protocol) +
                ", this program speaks protocol " + std::to_string(LLAMA_PLUGIN_PROTOCOL) +
                ": rebuild it against llama-backends " + core_version());
  }
  const char* toolchain = d.toolchain != nullptr ? d.toolchain : "(none)";
  if (std::strcmp(toolchain, LLAMA_PLUGIN_TOOLCHAIN) != 0) {
    throw Error(std::string("built for ") + toolchain + ", this program for " +
                LLAMA_PLUGIN_TOOLCHAIN + ": an incompatible compiler or standard library");
  }
  if (d.name == nullptr || d.register_entries == nullptr) {
    throw Error("its descriptor has no name or no registration function");
  }
}

// Runs the plugin's registration function; its exceptions become the refusal.
void run_registration(const llama_plugin_descriptor& d, PluginRegistrar& registrar) {
  try {
    d.register_entries(registrar);
  } catch (const std::exception& e) {
    throw Error(std::string("threw while registering: ") + one_line(e.what()));
  } catch (...) {
    throw Error("threw while registering (not a std::exception)");
  }
}

LoadedPlugin load_checked(const std::string& file) {
  plugins::check_shared_object(file);
  const std::string canonical = fs::canonical(file).string();
  for (const LoadedPlugin& p : BackendRegistry::instance().plugins()) {
    if (p.file == canonical) return p;  // already loaded: once is enough
  }

  const std::vector<std::string> cores_before = plugins::loaded_cores();
  PluginRegistrar registrar;
  void* handle = nullptr;
  {
    const CaptureScope capture(registrar);
    // RTLD_NOW: a missing symbol is this refusal, not a crash at its first call.
    // RTLD_LOCAL: plugins do not resolve each other's symbols. Never dlclose'd.
    handle = dlopen(canonical.c_str(), RTLD_NOW | RTLD_LOCAL);
  }
  if (handle == nullptr) throw Error("cannot load: " + one_line(dlerror()));
  for (const std::string& core : plugins::loaded_cores()) {
    if (std::find(cores_before.begin(), cores_before.end(), core) == cores_before.end()) {
      throw Error("loads a second llama-backends core (" + core + ") beside this program's " +
                  plugins::this_core_file() + ": rebuild it against llama-backends " +
                  core_version());
    }
  }
  const llama_plugin_descriptor& d = entry_descriptor(handle);
  check_descriptor(d);
  {
    const CaptureScope capture(registrar);
    run_registration(d, registrar);
  }
  LoadedPlugin plugin;
  plugin.name = d.name;
  plugin.file = canonical;
  BackendRegistry::instance().add_plugin(plugin, registrar);
  return BackendRegistry::instance().plugins().back();
}

}  // namespace

LoadedPlugin load_plugin(const std::string& file) {
  try {
    return load_checked(file);
  } catch (const Error& e) {
    throw Error("plugin " + file + ": " + e.what());
  } catch (const fs::filesystem_error& e) {
    throw Error("plugin " + file + ": " + e.code().message());
  }
}

std::vector<LoadedPlugin> load_plugin_directories(const std::string& directories,
                                                  const std::string& what) {
  std::vector<LoadedPlugin> loaded;
  std::stringstream list(directories);
  for (std::string dir; std::getline(list, dir, ':');) {
    if (dir.empty()) continue;
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) throw Error(what + ": " + dir + ": no such directory");
    std::vector<std::string> files;
    for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
      const std::string name = e.path().filename().string();
      if (name.rfind(kPluginPrefix, 0) == 0 && name.size() > std::strlen(kPluginSuffix) &&
          name.compare(name.size() - std::strlen(kPluginSuffix), std::string::npos,
                       kPluginSuffix) == 0) {
        files.push_back(e.path().string());
      }
    }
    if (ec) throw Error(what + ": " + dir + ": " + ec.message());
    std::sort(files.begin(), files.end());
    for (const std::string& f : files) loaded.push_back(load_plugin(f));
  }
  return loaded;
}

std::vector<LoadedPlugin> load_plugins_from_environment() {
  const char* path = std::getenv("LLAMA_PLUGIN_PATH");
  if (path == nullptr) return {};
  return load_plugin_directories(path, "LLAMA_PLUGIN_PATH");
}

}  // namespace llama
