// A model's own chat template and the special-token strings it renders with,
// as Hugging Face ships them in tokenizer_config.json.
#pragma once

#include <string>
#include <string_view>

namespace llama::chat {

struct ModelChatTemplate {
  std::string source;     // the Jinja template; empty when the model has none
  std::string bos_token;  // the template's bos_token / eos_token ("" when absent)
  std::string eos_token;
  std::string origin;  // where it was read, for messages ("dir/tokenizer_config.json")
};

// chat_template, bos_token and eos_token of a tokenizer_config.json. A list of
// named templates gives the one named "default" (as transformers picks it);
// a token given as an AddedToken object gives its "content". Throws
// llama::Error naming the file when it cannot be read, is not JSON, or holds
// these keys with other types.
ModelChatTemplate read_tokenizer_config(const std::string& path);
// The same from the file's text; `origin` names it in errors.
ModelChatTemplate parse_tokenizer_config(std::string_view json, const std::string& origin);

}  // namespace llama::chat
