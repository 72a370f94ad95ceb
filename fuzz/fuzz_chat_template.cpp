// libFuzzer target: the chat-template engine. The input is a template, then
// optionally a NUL byte and the variables as JSON (default: a two-message
// conversation). Parsing and rendering may refuse with TemplateError or
// llama::Error, never anything else; rendering stays inside its limits (small
// ones, so a run takes milliseconds: run_fuzzers.sh's -timeout=10 catches any
// work the budgets do not count). The whole input is also read as a
// tokenizer_config.json (chat_template, tokens) and through TemplateChatFormat,
// as a model's template is.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.hpp"
#include "llama/chat/chat_format.hpp"
#include "llama/chat/json_value.hpp"
#include "llama/chat/model_template.hpp"
#include "llama/chat/template.hpp"
#include "llama/error.hpp"

namespace {

constexpr const char* kConversation =
    R"({"messages": [{"role": "system", "content": " Be brief. "}, {"role": "user", "content": "Hi"}],
        "bos_token": "<s>", "eos_token": "</s>", "add_generation_prompt": true})";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  try {
    const llama::chat::ModelChatTemplate t = llama::chat::parse_tokenizer_config(input, "config");
    FUZZ_CHECK(t.origin == "config", "origin lost");
  } catch (const llama::Error& e) {
    FUZZ_CHECK(std::string_view(e.what()).starts_with("config: "), "an error not naming the file");
  }
  const size_t nul = input.find('\0');
  const std::string_view source = input.substr(0, nul);
  const std::string_view json =
      nul == std::string_view::npos ? kConversation : input.substr(nul + 1);
  llama::chat::Object vars;
  try {
    vars = llama::chat::variables_from_json(json, "variables");
  } catch (const llama::Error&) {
    return 0;  // malformed JSON: refused with one error
  }
  llama::chat::RenderLimits limits;  // small, so one run stays fast
  limits.max_output_bytes = 1 << 16;
  limits.max_value_bytes = 4 << 20;
  limits.max_work = 200'000;
  try {
    const auto tpl = llama::chat::ChatTemplate::parse(source);
    const std::string out = tpl.render(vars, limits);
    FUZZ_CHECK(out.size() <= limits.max_output_bytes, "output past the limit");
  } catch (const llama::chat::TemplateError& e) {
    if (e.line() == 0) {  // the whole template: only its size
      FUZZ_CHECK(source.size() > llama::chat::kMaxTemplateBytes, "line 0 for a small template");
    } else {
      FUZZ_CHECK(std::string_view(e.what()).starts_with("line "), "an error not naming the line");
    }
  } catch (const llama::Error&) {
    FUZZ_CHECK(false, "a template error without its line");
  }
  // As a model's template (parsed, not rendered: that takes the default limits):
  // every error names the origin.
  try {
    llama::chat::ModelChatTemplate t;
    t.source = std::string(source);
    t.origin = "model.gguf: tokenizer.chat_template";
    const llama::chat::TemplateChatFormat format(std::move(t));
    (void)format.source();
  } catch (const llama::Error& e) {
    const std::string_view what = e.what();
    FUZZ_CHECK(what.starts_with("model.gguf: tokenizer.chat_template: "),
               "an error without origin");
  }
  return 0;
}
