// The template lexer: source text into text runs, tag delimiters and the
// tokens inside tags, applying Jinja's whitespace control as Hugging Face
// renders chat templates (trim_blocks and lstrip_blocks on, one trailing
// newline of the source dropped, `{%-` / `-%}` and friends strip all
// whitespace on their side).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace llama::chat {

enum class TokenKind {
  text,        // literal template text
  stmt_open,   // {%
  stmt_close,  // %}
  expr_open,   // {{
  expr_close,  // }}
  name,        // identifiers and keywords
  integer,
  floating,
  string,  // the literal's value, escapes resolved
  op,      // punctuation and operators
  end,
};

struct Token {
  TokenKind kind = TokenKind::end;
  std::string text;
  int line = 1;  // 1-based line of the token's first character in the source
};

// Throws TemplateError (with the line) on an unterminated tag, comment or
// string, or a character no token starts with.
std::vector<Token> tokenize(std::string_view source);

}  // namespace llama::chat
