// --api-key: the Authorization header checked against the keys in constant time.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace llama::server {

// Whether `authorization` is "Bearer K" for one of `keys`. Every key is compared
// over its whole length whatever matched, so the time taken says nothing about
// how much of a key was right.
bool authorized(std::string_view authorization, const std::vector<std::string>& keys);

// Whether `path` is served without a key: the chat page (which asks for the key
// itself), /health and /v1/models (as llama.cpp).
bool is_public_path(std::string_view path);

}  // namespace llama::server
