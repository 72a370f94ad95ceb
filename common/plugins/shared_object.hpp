// What the plugin loader checks of a file before dlopen, and of the process around
// it: that the file is an ELF shared object, and which copies of the core are loaded.
#pragma once

#include <string>
#include <vector>

namespace llama::plugins {

// Throws Error (without the file name; the loader adds it) unless `path` is a regular
// file starting with an ELF header of type ET_DYN.
void check_shared_object(const std::string& path);

// The paths of every loaded object whose file name starts with "libllama-core.so".
std::vector<std::string> loaded_cores();

// The file the running core library was loaded from.
std::string this_core_file();

}  // namespace llama::plugins
