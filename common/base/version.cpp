// The core library's version, compiled in from the top-level project().
#include "llama/version.hpp"

namespace llama {

const char* core_version() { return LLAMA_BACKENDS_VERSION; }

}  // namespace llama
