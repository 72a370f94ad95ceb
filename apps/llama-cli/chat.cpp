// llama-cli's chat loop around llama::ChatSession: reads user lines, streams replies.
#include "chat.hpp"

#include <ctime>
#include <nlohmann/json.hpp>
#include <string>

#include "chat_template_flag.hpp"
#include "error_report.hpp"
#include "llama/chat/model_template.hpp"
#include "llama/chat_session.hpp"
#include "llama/error.hpp"
#include "llama/sampler.hpp"

namespace llama::cli {

namespace {

// One line typed (or piped) into a chat is one user turn; a turn longer than
// this cannot fit a model's context anyway (1 MiB is 250,000 tokens or more),
// and a line without end (/dev/zero on standard input) must not be read whole.
constexpr size_t kMaxChatLineBytes = size_t{1} << 20;

// The next line of `in` without its newline; nullopt at the end of input. Refused
// as soon as it passes kMaxChatLineBytes, before the rest of it is read.
std::optional<std::string> read_user_line(std::istream& in, int64_t line_number) {
  std::streambuf* buf = in.rdbuf();
  std::string line;
  bool any = false;
  for (int c = buf->sbumpc(); c != std::char_traits<char>::eof(); c = buf->sbumpc()) {
    any = true;
    if (c == '\n') return line;
    if (line.size() == kMaxChatLineBytes) {
      throw Error("standard input: line " + std::to_string(line_number) + " is longer than " +
                  std::to_string(kMaxChatLineBytes) + " bytes, the most one chat turn may have");
    }
    line.push_back(static_cast<char>(c));
  }
  in.setstate(std::ios::eofbit);
  if (!any) return std::nullopt;
  return line;
}

}  // namespace

std::optional<chat::TemplateChatFormat> chat_format(const CliOptions& o, const Tokenizer& tok,
                                                    const chat::ModelChatTemplate* embedded) {
  return chat_format(o.checkpoint, o.tokenizer, o.chat_template, tok, embedded);
}

std::vector<int32_t> first_turn_tokens(const CliOptions& o, const Tokenizer& tok,
                                       const chat::TemplateChatFormat* format) {
  if (format == nullptr) {
    return tok.encode(render_chat_turn(o.system_prompt, o.prompt, true),
                      {.add_special = true, .parse_special = o.parse_special});
  }
  std::vector<chat::ChatMessage> messages;
  if (!o.system_prompt.empty()) messages.push_back({"system", o.system_prompt});
  messages.push_back({"user", o.prompt});
  return format->encode(tok, format->render(messages), o.parse_special);
}

int run_chat(const CliOptions& o, const Model& model, const Tokenizer& tokenizer,
             InferenceBackend& backend, const chat::TemplateChatFormat* format, std::istream& in,
             std::ostream& out, std::ostream& err) {
  const uint64_t seed = o.seed ? *o.seed : static_cast<uint64_t>(std::time(nullptr));
  Sampler sampler(model.config.vocab_size, o.temperature, o.top_p, seed);
  ChatSession session(backend, model.config, tokenizer, sampler, o.system_prompt, o.steps,
                      o.parse_special, format);
  const bool text = o.format == OutputFormat::text;
  nlohmann::json turns = nlohmann::json::array();
  bool first = true;
  int64_t lines = 0;
  while (!session.finished()) {
    std::string user;
    if (first && o.prompt_given) {
      user = o.prompt;
    } else {
      if (text) out << "User: " << std::flush;
      std::optional<std::string> line = read_user_line(in, ++lines);
      if (!line) {
        if (text) out << "\n";
        break;  // end of input ends the session
      }
      user = std::move(*line);
    }
    first = false;
    if (text) out << "Assistant: " << std::flush;
    const ChatTurn turn = during("answering turn " + std::to_string(turns.size() + 1), [&] {
      return session.turn(user, [&](std::string_view piece) {
        if (text) out << piece << std::flush;
      });
    });
    if (text) out << "\n";
    turns.push_back({{"user", user},
                     {"prompt_tokens", turn.prompt_tokens},
                     {"reply_tokens", turn.reply_tokens},
                     {"text", turn.text},
                     {"stop_reason", to_string(turn.stop)}});
  }
  err << backend.report();
  if (!text) {
    nlohmann::json j{{"backend", backend.name()},
                     {"turns", turns},
                     {"positions", session.position()},
                     {"stop_reason", session.finished() ? "steps" : "end_of_input"}};
    out << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  }
  return 0;
}

}  // namespace llama::cli
