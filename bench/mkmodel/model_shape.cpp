// The named shapes: 15M, 42M, 110M from karpathy/tinyllamas, 340M as in
// ../shared/reference/peers.md, and 1b in TinyLlama-1.1B's proportions.
#include "model_shape.hpp"

#include <algorithm>
#include <cctype>

#include "llama/error.hpp"

namespace llama::bench {
namespace {

Config make(int64_t dim, int64_t hidden, int64_t layers, int64_t heads, int64_t kv_heads,
            int64_t vocab, int64_t seq, bool shared) {
  return Config::llama2c(dim, hidden, layers, heads, kv_heads, vocab, seq, shared);
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  return s;
}

}  // namespace

const std::vector<NamedShape>& named_shapes() {
  static const std::vector<NamedShape> shapes{
      {"15M", make(288, 768, 6, 6, 6, 32000, 256, true)},
      {"42M", make(512, 1376, 8, 8, 8, 32000, 1024, true)},
      {"110M", make(768, 2048, 12, 12, 12, 32000, 1024, true)},
      {"340M", make(1024, 2816, 24, 16, 16, 32000, 1024, true)},
      {"1b", make(2048, 5632, 22, 32, 4, 32000, 2048, false)},
  };
  return shapes;
}

Config shape_by_name(const std::string& name) {
  std::string known;
  for (const NamedShape& s : named_shapes()) {
    if (lower(s.name) == lower(name)) return s.config;
    known += (known.empty() ? "" : ", ") + s.name;
  }
  throw Error("unknown shape '" + name + "' (known: " + known + ")");
}

}  // namespace llama::bench
