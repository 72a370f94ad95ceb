// Jinja chat templates: the subset of Jinja that models' chat templates use
// (tokenizer_config.json's chat_template, GGUF's tokenizer.chat_template),
// parsed once and rendered for a conversation.
//
//   const ChatTemplate t = ChatTemplate::parse(source);
//   std::string prompt = t.render({{"messages", messages}, {"bos_token", Value::string("<s>")},
//                                  {"add_generation_prompt", Value::boolean(true)}});
//
// Supported: text, comments, {{ expressions }}, statements set (names, tuple
// targets, namespace attributes, {% set x %}...{% endset %}), if/elif/else,
// for (tuple targets, `if` filter, else, loop.index/index0/revindex/revindex0/
// first/last/length/previtem/nextitem), break/continue; literals (strings,
// numbers, lists, dicts, tuples), + - * / // % ** ~, comparisons, and/or/not,
// in/not in, `x if c else y`, tests (`is [not] defined/undefined/none/string/
// number/integer/boolean/true/false/mapping/iterable/sequence/callable/odd/
// even/lower/upper`), attribute access, indexing and slicing, the functions
// range/namespace/raise_exception, string methods (strip/lstrip/rstrip/
// startswith/endswith/title/capitalize/upper/lower/split/replace), dict
// methods (items/keys/values/get) and the filters listed in filters.cpp.
// Whitespace control as Hugging Face renders: trim_blocks, lstrip_blocks,
// `-` on either side of a tag. Macros too. Anything else (call, raw, include,
// extends, ...) is refused at parse time naming the construct and its line.
//
// Where Jinja implementations differ, this follows @huggingface/jinja (the
// reference renderer of ../shared/reference/chat-templates.json): booleans
// print as "true"/"false", none prints nothing, "a" + 1 concatenates.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "llama/chat/value.hpp"
#include "llama/error.hpp"

namespace llama::chat {

// A template that cannot be parsed or rendered. what() is one line:
// "line N: <why>"; a template's raise_exception("msg") gives
// "line N: the template raised: msg" with message() == "msg". A refusal of
// the whole template (its size) has line 0 and what() is "<why>" alone.
class TemplateError : public Error {
 public:
  TemplateError(int line, std::string message, bool raised = false);
  int line() const { return line_; }
  const std::string& message() const { return message_; }
  // True when the template itself refused (raise_exception), not the engine.
  bool raised() const { return raised_; }

 private:
  int line_;
  std::string message_;
  bool raised_;
};

// The largest template source parse() accepts: 256 KiB. Real chat templates
// are 0.2-20 KB (tool-calling ones with long built-in instructions the
// largest); parsing costs up to ~250 bytes of memory per source byte (a
// token and a tree node for every byte or two of dense expressions), so this
// bounds a parse to ~60 MB and a fraction of a second.
inline constexpr size_t kMaxTemplateBytes = size_t{256} << 10;

// Bounds that keep a hostile or broken template from hanging or exhausting
// memory: rendering stops with TemplateError once the output (or any string
// or list it builds) exceeds max_output_bytes, or once it has done more than
// max_work steps (one per expression node, statement and loop iteration,
// plus one per 64 bytes of strings and 8 elements of lists built): about a
// second of work, where real chat templates need thousands of steps.
struct RenderLimits {
  size_t max_output_bytes = size_t{16} << 20;
  uint64_t max_work = 5'000'000;
};

struct Program;  // the parsed statements (private)

class ChatTemplate {
 public:
  // Throws TemplateError on a syntax error, an unsupported construct, an
  // expression or statement nesting past the parser's bounds, or a source
  // larger than kMaxTemplateBytes (line 0).
  static ChatTemplate parse(std::string_view source);

  // Renders with `globals` as the top-level variables (messages, bos_token,
  // eos_token, add_generation_prompt, ...). Throws TemplateError.
  std::string render(const Object& globals, const RenderLimits& limits = {}) const;

 private:
  std::shared_ptr<const Program> program_;
};

}  // namespace llama::chat
