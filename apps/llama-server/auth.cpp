// Constant-time API key checks (auth.hpp).
#include "auth.hpp"

namespace llama::server {
namespace {

// 0 when equal; the loop runs over the key's length whatever `given` is, and
// differing lengths count as a difference without an early return.
unsigned differs(std::string_view given, std::string_view key) {
  unsigned diff = given.size() != key.size() ? 1u : 0u;
  for (size_t i = 0; i < key.size(); ++i) {
    const unsigned char g = i < given.size() ? static_cast<unsigned char>(given[i]) : 0;
    diff |= g ^ static_cast<unsigned char>(key[i]);
  }
  return diff;
}

}  // namespace

bool authorized(std::string_view authorization, const std::vector<std::string>& keys) {
  constexpr std::string_view kBearer = "Bearer ";
  if (authorization.substr(0, kBearer.size()) != kBearer) return false;
  const std::string_view given = authorization.substr(kBearer.size());
  bool any = false;
  for (const std::string& key : keys) any |= differs(given, key) == 0;
  return any;
}

bool is_public_path(std::string_view path) {
  return path == "/" || path == "/health" || path == "/v1/models";
}

}  // namespace llama::server
