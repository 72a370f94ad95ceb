// The backend a conformance executable checks: its registry spec, compiled in
// by llama_add_conformance (tests/conformance/CMakeLists.txt).
#pragma once

#include <string>

namespace llama::conformance {

std::string backend_under_test();

}  // namespace llama::conformance
