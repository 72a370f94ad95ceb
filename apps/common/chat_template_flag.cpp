// Picks the chat template (chat_template_flag.hpp) and reads it.
#include "chat_template_flag.hpp"

#include <filesystem>

#include "error_report.hpp"
#include "flag_files.hpp"
#include "generation_flags.hpp"
#include "llama/error.hpp"
#include "llama/mapped_file.hpp"

namespace llama::cli {

namespace fs = std::filesystem;

namespace {

// A tokenizer_config.json, named by `flag` ("" for the one beside the tokenizer).
chat::ModelChatTemplate tokenizer_config(std::string_view flag, const std::string& path) {
  return during("reading " + path, [&] {
    const char* what = "a tokenizer_config.json";
    const std::string text = flag.empty()
                                 ? read_text_file(path, kMaxTokenizerConfigBytes, what)
                                 : read_flag_file(flag, path, kMaxTokenizerConfigBytes, what);
    return chat::parse_tokenizer_config(text, path);
  });
}

}  // namespace

std::optional<chat::TemplateChatFormat> chat_format(const std::string& checkpoint,
                                                    const std::string& tokenizer_flag,
                                                    const std::string& chat_template_flag,
                                                    const Tokenizer& tok,
                                                    const chat::ModelChatTemplate* embedded) {
  // The tokenizer_config.json beside the tokenizer, if any; else the checkpoint's own.
  std::optional<chat::ModelChatTemplate> beside;
  if (const std::string path = resolve_tokenizer_path(checkpoint, tokenizer_flag); !path.empty()) {
    std::error_code ec;
    const fs::path k(path);
    const fs::path config =
        (fs::is_directory(k, ec) ? k : k.parent_path()) / "tokenizer_config.json";
    const bool hf = fs::is_directory(k, ec) || k.extension() == ".json";
    if (hf && fs::exists(config, ec)) beside = tokenizer_config("", config.string());
  }
  if (!beside && embedded != nullptr && !embedded->source.empty()) beside = *embedded;
  chat::ModelChatTemplate t;
  if (!chat_template_flag.empty()) {
    if (fs::path(chat_template_flag).extension() == ".json") {
      t = tokenizer_config("--chat-template", chat_template_flag);
      if (t.source.empty()) throw Error(chat_template_flag + ": has no chat_template");
    } else {
      t.source = during("reading " + chat_template_flag, [&] {
        return read_flag_file("--chat-template", chat_template_flag, kMaxChatTemplateBytes,
                              "a chat template");
      });
      // Empty, it would render every turn as nothing and fail later, naming no file.
      if (t.source.empty()) throw Error("--chat-template: " + chat_template_flag + ": is empty");
      t.origin = chat_template_flag;
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

}  // namespace llama::cli
