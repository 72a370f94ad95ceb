// The template parser: tokens into a Program of statements and expressions,
// with Jinja's operator precedence. Constructs outside the supported subset
// are refused here, naming the construct and its line.
#pragma once

#include <vector>

#include "ast.hpp"
#include "lexer.hpp"
#include "token_cursor.hpp"  // kMaxNesting

namespace llama::chat {

// Throws TemplateError on a syntax error, an unsupported statement, or
// nesting deeper than kMaxNesting.
Program parse_program(const std::vector<Token>& tokens);

}  // namespace llama::chat
