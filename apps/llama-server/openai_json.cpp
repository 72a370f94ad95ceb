// OpenAI's response shapes (openai_json.hpp).
#include "openai_json.hpp"

namespace llama::server {
namespace {

using nlohmann::json;

bool is_chat(const ResponseHeader& h) { return h.endpoint == Endpoint::chat_completions; }

json header_json(const ResponseHeader& h, const char* object) {
  return {{"id", h.id}, {"object", object}, {"created", h.created}, {"model", h.model}};
}

json bytes_of(const std::string& s) {
  json bytes = json::array();
  for (const char c : s) bytes.push_back(static_cast<unsigned char>(c));
  return bytes;
}

// Chat: {"content": [{"token", "logprob", "bytes", "top_logprobs": [...]}, ...]}.
json chat_logprobs(std::span<const GeneratedLogprob> logprobs) {
  json content = json::array();
  for (const GeneratedLogprob& g : logprobs) {
    json top = json::array();
    for (size_t i = 0; i < g.value.top.size(); ++i) {
      top.push_back({{"token", g.top_pieces[i]},
                     {"logprob", g.value.top[i].logprob},
                     {"bytes", bytes_of(g.top_pieces[i])}});
    }
    content.push_back({{"token", g.piece},
                       {"logprob", g.value.logprob},
                       {"bytes", bytes_of(g.piece)},
                       {"top_logprobs", std::move(top)}});
  }
  return {{"content", std::move(content)}};
}

// Completions (the legacy shape): parallel lists, top_logprobs as piece -> logprob.
json completion_logprobs(std::span<const GeneratedLogprob> logprobs, size_t offset) {
  json tokens = json::array(), values = json::array(), tops = json::array(),
       offsets = json::array();
  for (const GeneratedLogprob& g : logprobs) {
    tokens.push_back(g.piece);
    values.push_back(g.value.logprob);
    json top = json::object();
    for (size_t i = 0; i < g.value.top.size(); ++i) top[g.top_pieces[i]] = g.value.top[i].logprob;
    tops.push_back(std::move(top));
    offsets.push_back(offset);
    offset += g.piece.size();
  }
  return {{"tokens", std::move(tokens)},
          {"token_logprobs", std::move(values)},
          {"top_logprobs", std::move(tops)},
          {"text_offset", std::move(offsets)}};
}

}  // namespace

const char* finish_reason(StopReason reason) {
  switch (reason) {
    case StopReason::bos:
    case StopReason::eos:
    case StopReason::stop:
      return "stop";
    default:
      return "length";
  }
}

json usage_json(const GenerationUsage& u) {
  return {{"prompt_tokens", u.prompt_tokens},
          {"completion_tokens", u.completion_tokens},
          {"total_tokens", u.prompt_tokens + u.completion_tokens},
          {"prompt_tokens_details", {{"cached_tokens", u.cached_prompt_tokens}}}};
}

json logprobs_json(Endpoint endpoint, std::span<const GeneratedLogprob> logprobs, size_t offset) {
  return endpoint == Endpoint::chat_completions ? chat_logprobs(logprobs)
                                                : completion_logprobs(logprobs, offset);
}

json completion_json(const ResponseHeader& h, const std::vector<Choice>& choices, int logprobs,
                     bool tokens) {
  json out = json::array();
  GenerationUsage usage;
  for (const Choice& choice : choices) {
    const Completion& c = choice.completion;
    json j{{"index", choice.index}, {"finish_reason", finish_reason(c.stop_reason)}};
    if (tokens) j["tokens"] = c.tokens;
    if (is_chat(h)) {
      j["message"] = {{"role", "assistant"}, {"content", c.text}};
    } else {
      j["text"] = c.text;
    }
    j["logprobs"] = logprobs >= 0 ? logprobs_json(h.endpoint, choice.logprobs, 0) : json();
    out.push_back(std::move(j));
    usage.prompt_tokens += c.usage.prompt_tokens;
    usage.cached_prompt_tokens += c.usage.cached_prompt_tokens;
    usage.completion_tokens += c.usage.completion_tokens;
  }
  json j = header_json(h, is_chat(h) ? "chat.completion" : "text_completion");
  j["choices"] = std::move(out);
  j["usage"] = usage_json(usage);
  return j;
}

json chunk_json(const ResponseHeader& h, int64_t index, std::string_view text, bool first,
                const json& logprobs, const char* finish) {
  json choice{
      {"index", index}, {"logprobs", logprobs}, {"finish_reason", finish ? json(finish) : json()}};
  if (is_chat(h)) {
    json delta = json::object();
    if (first) delta["role"] = "assistant";
    if (!finish || !text.empty()) delta["content"] = text;
    choice["delta"] = std::move(delta);
  } else {
    choice["text"] = text;
  }
  json j = header_json(h, is_chat(h) ? "chat.completion.chunk" : "text_completion");
  j["choices"] = json::array({std::move(choice)});
  return j;
}

json usage_chunk_json(const ResponseHeader& h, const GenerationUsage& usage) {
  json j = header_json(h, is_chat(h) ? "chat.completion.chunk" : "text_completion");
  j["choices"] = json::array();
  j["usage"] = usage_json(usage);
  return j;
}

std::string to_text(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace llama::server
