// Compiled once per backend with LLAMA_CONFORMANCE_BACKEND set to its spec.
#include "conformance_backend.hpp"

namespace llama::conformance {

std::string backend_under_test() { return LLAMA_CONFORMANCE_BACKEND; }

}  // namespace llama::conformance
