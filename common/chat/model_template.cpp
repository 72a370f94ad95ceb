// tokenizer_config.json's chat_template and special tokens, through
// nlohmann-json; the file is read whole after a size check.
#include "llama/chat/model_template.hpp"

#include <fstream>
#include <nlohmann/json.hpp>

#include "llama/error.hpp"

namespace llama::chat {
namespace {

constexpr std::streamoff kMaxConfigBytes = std::streamoff{64} << 20;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open");
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  if (size < 0) throw Error(path + ": cannot read");
  if (size > kMaxConfigBytes) {
    throw Error(path + ": " + std::to_string(size) + " bytes is too large for a tokenizer config");
  }
  in.seekg(0);
  std::string text(static_cast<size_t>(size), '\0');
  if (!in.read(text.data(), size)) throw Error(path + ": cannot read");
  return text;
}

std::string token_string(const nlohmann::json& j, const char* key, const std::string& path) {
  if (!j.contains(key) || j[key].is_null()) return "";
  const nlohmann::json& v = j[key];
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("content") && v["content"].is_string()) {
    return v["content"].get<std::string>();
  }
  throw Error(path + ": " + key + " is neither a string nor a token with \"content\"");
}

std::string template_source(const nlohmann::json& j, const std::string& path) {
  if (!j.contains("chat_template") || j["chat_template"].is_null()) return "";
  const nlohmann::json& t = j["chat_template"];
  if (t.is_string()) return t.get<std::string>();
  if (t.is_array()) {
    for (const auto& entry : t) {
      if (entry.is_object() && entry.value("name", "") == "default" && entry.contains("template") &&
          entry["template"].is_string()) {
        return entry["template"].get<std::string>();
      }
    }
    throw Error(path + ": chat_template lists no template named \"default\"");
  }
  throw Error(path + ": chat_template is neither a string nor a list of named templates");
}

}  // namespace

ModelChatTemplate read_tokenizer_config(const std::string& path) {
  return parse_tokenizer_config(read_file(path), path);
}

ModelChatTemplate parse_tokenizer_config(std::string_view json, const std::string& path) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(json);
  } catch (const nlohmann::json::exception& e) {
    throw Error(path + ": not valid JSON: " + e.what());
  }
  if (!j.is_object()) throw Error(path + ": not a JSON object");
  ModelChatTemplate t;
  t.origin = path;
  t.source = template_source(j, path);
  t.bos_token = token_string(j, "bos_token", path);
  t.eos_token = token_string(j, "eos_token", path);
  return t;
}

}  // namespace llama::chat
