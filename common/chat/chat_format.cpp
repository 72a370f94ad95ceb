// TemplateChatFormat: render the whole conversation, then encode it with the
// template's special-token strings mapped to ids.
#include "llama/chat/chat_format.hpp"

#include "llama/error.hpp"

namespace llama::chat {
namespace {

// "<origin>: chat template line N: <why>", or "<origin>: <why>" for the whole template.
std::string named(const ModelChatTemplate& t, const TemplateError& e) {
  return t.origin + (e.line() == 0 ? ": " : ": chat template ") + e.what();
}

ChatTemplate parse_named(const ModelChatTemplate& t) {
  try {
    return ChatTemplate::parse(t.source);
  } catch (const TemplateError& e) {
    throw Error(named(t, e));
  }
}

}  // namespace

TemplateChatFormat::TemplateChatFormat(ModelChatTemplate t)
    : t_(std::move(t)), parsed_(parse_named(t_)) {}

std::string TemplateChatFormat::render(const std::vector<ChatMessage>& messages) const {
  Array list;
  for (const ChatMessage& m : messages) {
    list.push_back(
        Value::object({{"role", Value::string(m.role)}, {"content", Value::string(m.content)}}));
  }
  const Object vars{{"messages", Value::array(std::move(list))},
                    {"bos_token", Value::string(t_.bos_token)},
                    {"eos_token", Value::string(t_.eos_token)},
                    {"add_generation_prompt", Value::boolean(true)}};
  try {
    return parsed_.render(vars);
  } catch (const TemplateError& e) {
    throw Error(named(t_, e));
  }
}

std::vector<int32_t> TemplateChatFormat::encode(const Tokenizer& tok, std::string_view text,
                                                bool parse_special) const {
  const int32_t bos = tok.special().bos;
  const int32_t eos = tok.special().eos.empty() ? -1 : tok.special().eos.front();
  std::vector<int32_t> out;
  const auto encode_plain = [&](std::string_view part) {
    if (part.empty()) return;
    const std::vector<int32_t> ids =
        tok.encode(part, {.add_special = false, .parse_special = parse_special});
    out.insert(out.end(), ids.begin(), ids.end());
  };
  size_t at = 0;
  while (at < text.size()) {
    // The earliest bos_token or eos_token from `at` whose id the tokenizer has.
    size_t hit = std::string_view::npos, len = 0;
    int32_t id = -1;
    for (const auto& [s, i] : {std::pair{std::string_view(t_.bos_token), bos},
                               std::pair{std::string_view(t_.eos_token), eos}}) {
      if (s.empty() || i < 0) continue;
      const size_t h = text.find(s, at);
      if (h < hit) {
        hit = h;
        len = s.size();
        id = i;
      }
    }
    if (hit == std::string_view::npos) break;
    encode_plain(text.substr(at, hit - at));
    out.push_back(id);
    at = hit + len;
  }
  encode_plain(text.substr(at));
  return out;
}

}  // namespace llama::chat
