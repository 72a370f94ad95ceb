// tokenizer_config.json's chat_template and special tokens: a bounded read of a
// regular file, strict JSON, and every key this reads checked for its type
// (a wrong one is an Error naming the file and the key, never a JSON exception).
#include "llama/chat/model_template.hpp"

#include <nlohmann/json.hpp>

#include "formats/json/strict_json.hpp"
#include "llama/error.hpp"

namespace llama::chat {
namespace {

// Real tokenizer_config.json files are a few KB to a few MB (added_tokens_decoder
// lists every special token; some hold 250k). 64 MiB is far past any.
constexpr int64_t kMaxConfigBytes = int64_t{64} << 20;

[[noreturn]] void wrong_type(const std::string& path, const std::string& key,
                             const nlohmann::json& v, const char* expected) {
  throw Error(path + ": " + key + " is " + json_kind(v) + ", expected " + expected);
}

std::string token_string(const nlohmann::json& j, const char* key, const std::string& path) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return "";
  if (it->is_string()) return it->get<std::string>();
  if (it->is_object()) {
    const auto content = it->find("content");
    if (content != it->end() && content->is_string()) return content->get<std::string>();
    if (content != it->end()) wrong_type(path, std::string(key) + ".content", *content, "a string");
  }
  throw Error(path + ": " + key + " is neither a string nor a token with \"content\"");
}

std::string template_source(const nlohmann::json& j, const std::string& path) {
  const auto t = j.find("chat_template");
  if (t == j.end() || t->is_null()) return "";
  if (t->is_string()) return t->get<std::string>();
  if (!t->is_array()) {
    throw Error(path + ": chat_template is neither a string nor a list of named templates");
  }
  // Every entry checked, not only up to "default": a malformed list is refused as a whole.
  std::string found;
  bool have_default = false;
  for (size_t i = 0; i < t->size(); ++i) {
    const nlohmann::json& entry = (*t)[i];
    const std::string at = "chat_template[" + std::to_string(i) + "]";
    if (!entry.is_object()) wrong_type(path, at, entry, "an object with \"name\" and \"template\"");
    const auto name = entry.find("name");
    const auto source = entry.find("template");
    if (name == entry.end() || !name->is_string()) {
      if (name == entry.end()) throw Error(path + ": " + at + " has no \"name\"");
      wrong_type(path, at + ".name", *name, "a string");
    }
    if (source == entry.end() || !source->is_string()) {
      if (source == entry.end()) throw Error(path + ": " + at + " has no \"template\"");
      wrong_type(path, at + ".template", *source, "a string");
    }
    if (!have_default && name->get_ref<const std::string&>() == "default") {
      found = source->get<std::string>();
      have_default = true;
    }
  }
  if (!have_default) throw Error(path + ": chat_template lists no template named \"default\"");
  return found;
}

}  // namespace

ModelChatTemplate read_tokenizer_config(const std::string& path) {
  return parse_tokenizer_config(read_text_file(path, kMaxConfigBytes), path);
}

ModelChatTemplate parse_tokenizer_config(std::string_view json, const std::string& path) {
  const nlohmann::json j = parse_strict_json(json, path);
  if (!j.is_object()) throw Error(path + ": not a JSON object");
  ModelChatTemplate t;
  t.origin = path;
  t.source = template_source(j, path);
  t.bos_token = token_string(j, "bos_token", path);
  t.eos_token = token_string(j, "eos_token", path);
  return t;
}

}  // namespace llama::chat
