// Reading stream chunks and error bodies (stream_chunk.hpp) with nlohmann-json.
#include "stream_chunk.hpp"

#include <nlohmann/json.hpp>

namespace llama::load {
namespace {

using nlohmann::json;

// At most 200 bytes of `text` on one line: error reports stay one line each.
std::string one_line(std::string_view text) {
  std::string out;
  for (const char c : text.substr(0, 200)) out.push_back(c == '\n' || c == '\r' ? ' ' : c);
  if (text.size() > 200) out += "...";
  return out;
}

std::string message_of(const json& error) {
  if (error.is_string()) return one_line(error.get<std::string>());
  if (error.is_object() && error.contains("message") && error["message"].is_string())
    return one_line(error["message"].get<std::string>());
  return one_line(error.dump());
}

bool non_empty_string(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() &&
         !j[key].get_ref<const std::string&>().empty();
}

}  // namespace

StreamChunk parse_stream_chunk(std::string_view data, Endpoint endpoint) {
  StreamChunk c;
  if (data == "[DONE]") {
    c.done = true;
    return c;
  }
  const json j = json::parse(data, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    c.error = "not a JSON object in the stream: " + one_line(data);
    return c;
  }
  if (j.contains("error")) {
    c.error = message_of(j["error"]);
    return c;
  }
  if (j.contains("usage") && j["usage"].is_object() && j["usage"].contains("completion_tokens") &&
      j["usage"]["completion_tokens"].is_number_integer())
    c.completion_tokens = j["usage"]["completion_tokens"].get<int64_t>();
  if (j.contains("choices") && j["choices"].is_array()) {
    for (const json& choice : j["choices"]) {
      if (endpoint == Endpoint::chat) {
        if (choice.is_object() && choice.contains("delta") &&
            non_empty_string(choice["delta"], "content"))
          c.has_content = true;
      } else if (non_empty_string(choice, "text")) {
        c.has_content = true;
      }
    }
  }
  return c;
}

std::string error_message(std::string_view body) {
  const json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!j.is_discarded() && j.is_object() && j.contains("error")) return message_of(j["error"]);
  return one_line(body);
}

}  // namespace llama::load
