// /tokenize and /detokenize bodies (tokenize_request.hpp).
#include "tokenize_request.hpp"

#include <limits>

#include "api_error.hpp"
#include "json_fields.hpp"

namespace llama::server {

TokenizeRequest parse_tokenize_request(std::string_view body) {
  const nlohmann::json j = parse_body(body);
  TokenizeRequest r;
  bool has_content = false;
  for (const auto& [key, v] : j.items()) {
    if (key == "content") {
      r.content = get_string(v, key);
      has_content = true;
    } else if (key == "add_special") {
      r.add_special = get_bool(v, key);
    } else if (key == "parse_special") {
      r.parse_special = get_bool(v, key);
    } else if (key == "with_pieces") {
      r.with_pieces = get_bool(v, key);
    } else {
      throw invalid_field(key, "unknown field");
    }
  }
  if (!has_content) throw invalid_field("content", "required");
  return r;
}

DetokenizeRequest parse_detokenize_request(std::string_view body) {
  const nlohmann::json j = parse_body(body);
  DetokenizeRequest r;
  bool has_tokens = false;
  for (const auto& [key, v] : j.items()) {
    if (key != "tokens") throw invalid_field(key, "unknown field");
    if (!v.is_array())
      throw invalid_field(key, std::string("must be a list of token ids, got ") + type_name(v));
    for (size_t i = 0; i < v.size(); ++i) {
      r.tokens.push_back(get_int(v[i], "tokens[" + std::to_string(i) + "]", 0,
                                 std::numeric_limits<int32_t>::max()));
    }
    has_tokens = true;
  }
  if (!has_tokens) throw invalid_field("tokens", "required");
  return r;
}

}  // namespace llama::server
