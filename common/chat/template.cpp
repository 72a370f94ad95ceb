// ChatTemplate: lex + parse once, render many times.
#include "llama/chat/template.hpp"

#include "ast.hpp"
#include "interpreter.hpp"
#include "lexer.hpp"
#include "parser.hpp"

namespace llama::chat {
namespace {

std::string describe(int line, const std::string& message, bool raised) {
  if (line == 0) return message;  // the whole template
  return "line " + std::to_string(line) + ": " +
         (raised ? "the template raised: " + message : message);
}

}  // namespace

TemplateError::TemplateError(int line, std::string message, bool raised)
    : Error(describe(line, message, raised)),
      line_(line),
      message_(std::move(message)),
      raised_(raised) {}

ChatTemplate ChatTemplate::parse(std::string_view source) {
  if (source.size() > kMaxTemplateBytes) {
    throw TemplateError(0, "the template is " + std::to_string(source.size()) +
                               " bytes, more than the " + std::to_string(kMaxTemplateBytes) +
                               " a chat template may have");
  }
  ChatTemplate t;
  t.program_ = std::make_shared<const Program>(parse_program(tokenize(source)));
  return t;
}

std::string ChatTemplate::render(const Object& globals, const RenderLimits& limits) const {
  RenderContext ctx(limits);
  Interpreter interpreter(ctx, globals);
  std::string out;
  interpreter.run(*program_, out);
  return out;
}

}  // namespace llama::chat
