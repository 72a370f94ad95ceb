// Jinja expressions from tokens, with Jinja's precedence, loosest first:
// `x if c else y`, or, and, not, comparisons and in / not in, + -, ~,
// * / // %, **, unary - +, then postfix (.attr, [index], [a:b:c], calls),
// filters (|) and tests (is).
#pragma once

#include <vector>

#include "ast.hpp"
#include "token_cursor.hpp"

namespace llama::chat {

class ExpressionParser : protected TokenCursor {
 public:
  using TokenCursor::TokenCursor;

  // An expression, or several separated by commas (a tuple without parentheses).
  ExprPtr expression_list();
  ExprPtr expression();
  ExprPtr or_expr();

 private:
  ExprPtr and_expr();
  ExprPtr not_expr();
  ExprPtr compare();
  ExprPtr math1();
  ExprPtr concat();
  ExprPtr math2();
  ExprPtr power();
  ExprPtr unary();
  // The operand of unary - or +: no filters (`-x|abs` is `(-x)|abs`).
  ExprPtr unary_operand();
  ExprPtr filters_and_tests(ExprPtr e);
  // "(" arguments ")" appended to `call`'s args and kwargs.
  void call_arguments(Expr& call);
  ExprPtr postfix(ExprPtr e);
  // After "[": an index or a slice, then "]".
  ExprPtr subscript(ExprPtr object, int line);
  Value parse_integer(const Token& t) const;
  ExprPtr primary();
  ExprPtr parenthesized();
  ExprPtr list_literal();
  ExprPtr dict_literal();
};

}  // namespace llama::chat
