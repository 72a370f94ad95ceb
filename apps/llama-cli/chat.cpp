// llama-cli's chat loop around llama::ChatSession: reads user lines, streams replies.
#include "chat.hpp"

#include <ctime>
#include <nlohmann/json.hpp>
#include <string>

#include "llama/chat.hpp"
#include "llama/sampler.hpp"

namespace llama::cli {

int run_chat(const CliOptions& o, const Model& model, const Tokenizer& tokenizer,
             InferenceBackend& backend, std::istream& in, std::ostream& out, std::ostream& err) {
  const uint64_t seed = o.seed ? *o.seed : static_cast<uint64_t>(std::time(nullptr));
  Sampler sampler(model.config.vocab_size, o.temperature, o.top_p, seed);
  ChatSession session(backend, model.config, tokenizer, sampler, o.system_prompt, o.steps,
                      o.parse_special);
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
