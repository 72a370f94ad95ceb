// Names of the numerics policies (llama/numerics.hpp).
#include "llama/numerics.hpp"

#include "llama/error.hpp"

namespace llama {

const char* to_string(Numerics n) { return n == Numerics::fast ? "fast" : "exact"; }

Numerics parse_numerics(const std::string& text, const std::string& what) {
  if (text == "exact") return Numerics::exact;
  if (text == "fast") return Numerics::fast;
  throw Error(what + ": unknown numerics policy '" + text + "' (exact or fast)");
}

}  // namespace llama
