// Checks a completions / chat completions body field by field (completion_request.hpp).
#include "completion_request.hpp"

#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "api_error.hpp"
#include "json_fields.hpp"

namespace llama::server {
namespace {

using nlohmann::json;

// Fields OpenAI defines that this server cannot honour: refused by name rather than
// ignored, so a client never believes it got what it asked for.
const std::set<std::string, std::less<>> kUnsupported = {
    "tools",         "tool_choice",        "functions",
    "function_call", "response_format",    "audio",
    "modalities",    "prediction",         "reasoning_effort",
    "service_tier",  "web_search_options", "parallel_tool_calls",
    "store",         "metadata",           "suffix"};

std::vector<std::string> get_stop(const json& v) {
  std::vector<std::string> stop;
  const auto add = [&](const json& s, const std::string& field) {
    const std::string& text = get_string(s, field);
    if (text.empty()) throw invalid_field(field, "must not be empty");
    if (text.size() > kMaxStopBytes)
      throw invalid_field(field, "is longer than " + std::to_string(kMaxStopBytes) + " bytes");
    stop.push_back(text);
  };
  if (v.is_string()) {
    add(v, "stop");
  } else if (v.is_array()) {
    if (v.size() > kMaxStopStrings)
      throw invalid_field("stop", "at most " + std::to_string(kMaxStopStrings) + " strings");
    for (size_t i = 0; i < v.size(); ++i) add(v[i], "stop[" + std::to_string(i) + "]");
  } else {
    throw invalid_field("stop",
                        std::string("must be a string or a list of strings, got ") + type_name(v));
  }
  return stop;
}

// One prompt: text, or a list of token ids; never empty.
Prompt get_one_prompt(const json& v, const std::string& field) {
  Prompt p;
  if (v.is_string()) {
    p.text = v.get<std::string>();
    if (p.text.empty()) throw invalid_field(field, "must not be empty");
    return p;
  }
  if (!v.is_array())
    throw invalid_field(
        field, std::string("must be a string or a list of token ids, got ") + type_name(v));
  if (v.empty()) throw invalid_field(field, "must not be empty");
  p.is_tokens = true;
  p.tokens.reserve(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    p.tokens.push_back(get_int(v[i], field + "[" + std::to_string(i) + "]", 0,
                               std::numeric_limits<int32_t>::max()));
  }
  return p;
}

// completions' prompt: a string, token ids, or a list of strings or token-id lists
// (several prompts, one choice each).
std::vector<Prompt> get_prompts(const json& v) {
  const bool several = v.is_array() && !v.empty() && (v[0].is_string() || v[0].is_array());
  if (!several) return {get_one_prompt(v, "prompt")};
  if (v.size() > kMaxPrompts) {
    throw invalid_field("prompt", "at most " + std::to_string(kMaxPrompts) +
                                      " prompts in one request, got " + std::to_string(v.size()));
  }
  std::vector<Prompt> prompts;
  for (size_t i = 0; i < v.size(); ++i)
    prompts.push_back(get_one_prompt(v[i], "prompt[" + std::to_string(i) + "]"));
  return prompts;
}

// A message's content: a string, or a list of {"type": "text", "text": ...} parts joined.
std::string get_content(const json& v, const std::string& field) {
  if (v.is_string()) return v.get<std::string>();
  if (!v.is_array())
    throw invalid_field(
        field, std::string("must be a string or a list of text parts, got ") + type_name(v));
  std::string text;
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string part = field + "[" + std::to_string(i) + "]";
    const json& p = v[i];
    if (!p.is_object()) throw invalid_field(part, "must be an object");
    for (const auto& [key, value] : p.items()) {
      if (key == "type") {
        if (get_string(value, part + ".type") != "text")
          throw invalid_field(part + ".type", "only \"text\" parts are supported");
      } else if (key == "text") {
        text += get_string(value, part + ".text");
      } else {
        throw invalid_field(part + "." + key, "unknown field");
      }
    }
  }
  return text;
}

std::vector<chat::ChatMessage> get_messages(const json& v) {
  if (!v.is_array() || v.empty())
    throw invalid_field("messages", "must be a non-empty list of messages");
  std::vector<chat::ChatMessage> messages;
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string field = "messages[" + std::to_string(i) + "]";
    const json& m = v[i];
    if (!m.is_object()) throw invalid_field(field, "must be an object");
    chat::ChatMessage message;
    bool has_role = false, has_content = false;
    for (const auto& [key, value] : m.items()) {
      if (key == "role") {
        message.role = get_string(value, field + ".role");
        if (message.role != "system" && message.role != "user" && message.role != "assistant")
          throw invalid_field(field + ".role",
                              "must be system, user or assistant, got '" + message.role + "'");
        has_role = true;
      } else if (key == "content") {
        message.content = get_content(value, field + ".content");
        has_content = true;
      } else if (key == "name" && value.is_string()) {
        // A participant's name: templates have no place for it, and it changes nothing.
      } else {
        throw invalid_field(field + "." + key, "is not supported");
      }
    }
    if (!has_role) throw invalid_field(field + ".role", "required");
    if (!has_content) throw invalid_field(field + ".content", "required");
    messages.push_back(std::move(message));
  }
  return messages;
}

}  // namespace

CompletionRequest parse_completion_request(std::string_view body, Endpoint endpoint) {
  const json j = parse_body(body);
  const bool chat = endpoint == Endpoint::chat_completions;
  CompletionRequest r;
  r.endpoint = endpoint;
  bool has_prompt = false;
  bool logprobs_on = false;  // chat: logprobs true
  std::optional<int64_t> top_logprobs;
  const json* stream_options = nullptr;
  for (const auto& [key, v] : j.items()) {
    if (v.is_null()) continue;  // SDKs send null for "not given"
    if (key == "model") {
      r.model = get_string(v, key);
    } else if (!chat && key == "prompt") {
      r.prompts = get_prompts(v);
      has_prompt = true;
    } else if (chat && key == "messages") {
      r.messages = get_messages(v);
      has_prompt = true;
    } else if (key == "max_tokens" || (chat && key == "max_completion_tokens")) {
      r.max_tokens = get_int(v, key, 1, std::numeric_limits<int64_t>::max());
    } else if (key == "temperature") {
      r.temperature = get_number(v, key, 0.0, 2.0);
    } else if (key == "top_p") {
      r.top_p = get_number(v, key, 0.0, 1.0);
    } else if (key == "seed") {
      r.seed = static_cast<uint64_t>(get_int(v, key, 0, std::numeric_limits<int64_t>::max()));
    } else if (key == "stop") {
      r.stop = get_stop(v);
    } else if (key == "stream") {
      r.stream = get_bool(v, key);
    } else if (key == "stream_options") {
      if (!v.is_object()) throw invalid_field(key, "must be an object");
      stream_options = &v;
    } else if (key == "n" || (!chat && key == "best_of")) {
      if (get_int(v, key, 1, std::numeric_limits<int64_t>::max()) != 1)
        throw invalid_field(key, "only 1 is supported");
    } else if (key == "ignore_eos") {
      r.ignore_eos = get_bool(v, key);
    } else if (key == "return_tokens") {
      r.return_tokens = get_bool(v, key);
    } else if (key == "user") {
      get_string(v, key);  // an end-user id for abuse tracking: nothing to do here
    } else if (key == "frequency_penalty" || key == "presence_penalty") {
      if (get_number(v, key, -2.0, 2.0) != 0.0f)
        throw invalid_field(key, "penalties are not supported (only 0)");
    } else if (key == "logit_bias") {
      if (!v.is_object() || !v.empty()) throw invalid_field(key, "is not supported");
    } else if (!chat && key == "echo") {
      if (get_bool(v, key)) throw invalid_field(key, "is not supported");
    } else if (!chat && key == "logprobs") {
      r.logprobs = static_cast<int>(get_int(v, key, 0, kMaxCompletionLogprobs));
    } else if (chat && key == "logprobs") {
      logprobs_on = get_bool(v, key);
    } else if (chat && key == "top_logprobs") {
      top_logprobs = get_int(v, key, 0, kMaxChatTopLogprobs);
    } else if (kUnsupported.contains(key)) {
      throw invalid_field(key, "is not supported by this server");
    } else {
      throw invalid_field(key, "unknown field");
    }
  }
  if (!has_prompt) throw invalid_field(chat ? "messages" : "prompt", "required");
  if (chat) {
    if (top_logprobs && !logprobs_on) throw invalid_field("top_logprobs", "needs logprobs: true");
    if (logprobs_on) r.logprobs = static_cast<int>(top_logprobs.value_or(0));
  }
  if (stream_options) {
    if (!r.stream) throw invalid_field("stream_options", "only applies with stream: true");
    for (const auto& [key, v] : stream_options->items()) {
      if (key == "include_usage") {
        if (!v.is_null()) r.include_usage = get_bool(v, "stream_options.include_usage");
      } else {
        throw invalid_field("stream_options." + key, "unknown field");
      }
    }
  }
  return r;
}

}  // namespace llama::server
