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
// bounds a parse to ~70 MB and a fraction of a second.
inline constexpr size_t kMaxTemplateBytes = size_t{256} << 10;

// Bounds that keep a hostile or broken template from hanging or exhausting
// memory; rendering stops with TemplateError naming the limit once one is
// passed. Each is 30 times or more what the reference templates take to
// render a conversation a 128k-token context holds (2,000 messages, 0.5 MB:
// 80-150 thousand steps, 0.5-1.1 MB of values built, 0.5-0.6 MB of output),
// and small enough that a template spending all of one takes about a second
// and under 256 MB even under AddressSanitizer.
struct RenderLimits {
  // The rendered text, and any one string or JSON text built on the way.
  size_t max_output_bytes = size_t{16} << 20;
  // Bytes of the strings, lists and dicts the render builds, counted as they
  // are built and never given back (so no lifetime tracking is needed and it
  // bounds the peak): a list element or dict entry counts sizeof(Value).
  size_t max_value_bytes = size_t{64} << 20;
  // Steps: one per statement, expression node and loop iteration, per list
  // element or dict entry a built-in visits (copying, comparing, `in`, tojson,
  // a dict lookup scans 16 entries a step) and per 64 bytes of text it builds
  // or scans.
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
