// The one error type the library throws at its boundary; apps turn it into a
// one-line message and an exit code.
#pragma once

#include <stdexcept>
#include <string>

namespace llama {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace llama
