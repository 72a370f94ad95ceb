// The bodies of POST /tokenize and /detokenize (llama.cpp's server's fields), checked
// before the tokenizer sees them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace llama::server {

struct TokenizeRequest {
  std::string content;
  bool add_special = false;  // llama.cpp's default: no BOS
  bool parse_special = true;
  bool with_pieces = false;  // tokens as {"id", "piece"} objects
};

struct DetokenizeRequest {
  std::vector<int64_t> tokens;  // unchecked against the vocabulary here
};

// Throw ApiError 400 naming the field.
TokenizeRequest parse_tokenize_request(std::string_view body);
DetokenizeRequest parse_detokenize_request(std::string_view body);

}  // namespace llama::server
