// llama-cli's chat loop around llama::ChatSession: reads user lines, streams replies.
#include "chat.hpp"

#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>
#include <string>
#include "llama/error.hpp"

#include "llama/chat_session.hpp"
#include "llama/sampler.hpp"

namespace llama::cli {

namespace fs = std::filesystem;

std::optional<chat::TemplateChatFormat> chat_format(const CliOptions& o, const Tokenizer& tok,
                                                    const chat::ModelChatTemplate* embedded) {
  // The tokenizer_config.json beside the tokenizer, if any; else the checkpoint's own.
  std::optional<chat::ModelChatTemplate> beside;
  if (const std::string path = resolve_tokenizer_path(o); !path.empty()) {
    std::error_code ec;
    const fs::path k(path);
    const fs::path config =
        (fs::is_directory(k, ec) ? k : k.parent_path()) / "tokenizer_config.json";
    const bool hf = fs::is_directory(k, ec) || k.extension() == ".json";
    if (hf && fs::exists(config, ec)) beside = chat::read_tokenizer_config(config.string());
  }
  if (!beside && embedded != nullptr && !embedded->source.empty()) beside = *embedded;
  chat::ModelChatTemplate t;
  if (!o.chat_template.empty()) {
    if (fs::path(o.chat_template).extension() == ".json") {
      t = chat::read_tokenizer_config(o.chat_template);
      if (t.source.empty()) throw Error(o.chat_template + ": has no chat_template");
    } else {
      std::ifstream in(o.chat_template, std::ios::binary);
      if (!in) throw Error(o.chat_template + ": cannot open the chat template");
      std::ostringstream text;
      text << in.rdbuf();
      t.source = text.str();
      t.origin = o.chat_template;
      if (beside) {
        t.bos_token = beside->bos_token;
        t.eos_token = beside->eos_token;
      }
    }
  } else if (beside && !beside->source.empty()) {
    t = *beside;
  } else {
    return std::nullopt;
  }
  // Without a tokenizer_config.json the tokenizer's own pieces name BOS and EOS.
  const SpecialTokens& special = tok.special();
  if (t.bos_token.empty() && special.bos >= 0) t.bos_token = std::string(tok.piece(special.bos));
  if (t.eos_token.empty() && !special.eos.empty())
    t.eos_token = std::string(tok.piece(special.eos.front()));
  return chat::TemplateChatFormat(std::move(t));
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
  while (!session.finished()) {
    std::string user;
    if (first && o.prompt_given) {
      user = o.prompt;
    } else {
      if (text) out << "User: " << std::flush;
      if (!std::getline(in, user)) {
        if (text) out << "\n";
        break;  // end of input ends the session
      }
    }
    first = false;
    if (text) out << "Assistant: " << std::flush;
    const ChatTurn turn = session.turn(user, [&](std::string_view piece) {
      if (text) out << piece << std::flush;
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
