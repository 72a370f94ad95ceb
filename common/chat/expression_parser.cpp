// The expression half of the template parser (expression_parser.hpp).
#include "expression_parser.hpp"

#include <charconv>
#include <cstdlib>
#include <initializer_list>
#include <string_view>

namespace llama::chat {
namespace {

bool is_one_of(std::string_view s, std::initializer_list<std::string_view> set) {
  for (const std::string_view x : set) {
    if (s == x) return true;
  }
  return false;
}

ExprPtr node(Expr::Kind kind, int line, std::string name = {}) {
  auto e = std::make_unique<Expr>();
  e->kind = kind;
  e->line = line;
  e->name = std::move(name);
  return e;
}

ExprPtr binary(std::string op, ExprPtr a, ExprPtr b) {
  ExprPtr e = node(Expr::Kind::binary, a->line, std::move(op));
  add_arg(*e, std::move(a));
  add_arg(*e, std::move(b));
  return e;
}

ExprPtr literal(Value v, int line) {
  ExprPtr e = node(Expr::Kind::literal, line);
  e->value = std::move(v);
  return e;
}

}  // namespace

// An expression, or several separated by commas (a tuple without parentheses).
ExprPtr ExpressionParser::expression_list() {
  ExprPtr first = expression();
  if (!is_op(",")) return first;
  ExprPtr t = node(Expr::Kind::tuple, first->line);
  add_arg(*t, std::move(first));
  while (accept_op(",")) add_arg(*t, expression());
  return t;
}

ExprPtr ExpressionParser::expression() {
  enter();
  ExprPtr e = or_expr();
  if (accept_name("if")) {
    ExprPtr t = node(Expr::Kind::ternary, e->line);
    add_arg(*t, std::move(e));
    add_arg(*t, or_expr());
    add_arg(*t, accept_name("else") ? expression() : nullptr);
    e = std::move(t);
  }
  leave();
  return e;
}

ExprPtr ExpressionParser::or_expr() {
  ExprPtr e = and_expr();
  while (accept_name("or")) e = binary("or", std::move(e), and_expr());
  return e;
}

ExprPtr ExpressionParser::and_expr() {
  ExprPtr e = not_expr();
  while (accept_name("and")) e = binary("and", std::move(e), not_expr());
  return e;
}

ExprPtr ExpressionParser::not_expr() {
  if (is_name("not")) {
    const int line = next().line;
    enter();
    ExprPtr e = node(Expr::Kind::unary, line, "not");
    add_arg(*e, not_expr());
    leave();
    return e;
  }
  return compare();
}

ExprPtr ExpressionParser::compare() {
  ExprPtr e = math1();
  while (true) {
    std::string op;
    if (peek().kind == TokenKind::op &&
        is_one_of(peek().text, {"==", "!=", "<", ">", "<=", ">="})) {
      op = next().text;
    } else if (is_name("in")) {
      next();
      op = "in";
    } else if (is_name("not") && is_name("in", 1)) {
      next();
      next();
      op = "not in";
    } else {
      return e;
    }
    e = binary(op, std::move(e), math1());
  }
}

ExprPtr ExpressionParser::math1() {
  ExprPtr e = concat();
  while (is_op("+") || is_op("-")) {
    const std::string op = next().text;
    e = binary(op, std::move(e), concat());
  }
  return e;
}

ExprPtr ExpressionParser::concat() {
  ExprPtr e = math2();
  while (accept_op("~")) e = binary("~", std::move(e), math2());
  return e;
}

ExprPtr ExpressionParser::math2() {
  ExprPtr e = power();
  while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
    const std::string op = next().text;
    e = binary(op, std::move(e), power());
  }
  return e;
}

ExprPtr ExpressionParser::power() {
  ExprPtr e = unary();
  while (accept_op("**")) e = binary("**", std::move(e), unary());
  return e;
}

ExprPtr ExpressionParser::unary() {
  enter();
  ExprPtr e;
  if (is_op("-") || is_op("+")) {
    const Token& t = next();
    e = node(Expr::Kind::unary, t.line, t.text);
    add_arg(*e, unary_operand());
  } else {
    e = postfix(primary());
  }
  e = filters_and_tests(std::move(e));
  leave();
  return e;
}

// The operand of unary - or +: no filters (`-x|abs` is `(-x)|abs`).
ExprPtr ExpressionParser::unary_operand() {
  enter();
  ExprPtr e;
  if (is_op("-") || is_op("+")) {
    const Token& t = next();
    e = node(Expr::Kind::unary, t.line, t.text);
    add_arg(*e, unary_operand());
  } else {
    e = postfix(primary());
  }
  leave();
  return e;
}

ExprPtr ExpressionParser::filters_and_tests(ExprPtr e) {
  while (true) {
    if (accept_op("|")) {
      if (peek().kind != TokenKind::name) fail("expected a filter name after '|'");
      const Token& t = next();
      ExprPtr f = node(Expr::Kind::filter, t.line, t.text);
      add_arg(*f, std::move(e));
      if (is_op("(")) call_arguments(*f);
      e = std::move(f);
    } else if (is_name("is")) {
      const int line = next().line;
      ExprPtr test = node(Expr::Kind::test, line);
      test->negated = accept_name("not");
      if (peek().kind != TokenKind::name) fail("expected a test name after 'is'");
      test->name = next().text;
      add_arg(*test, std::move(e));
      if (is_op("(")) {
        call_arguments(*test);
      } else if (peek().kind == TokenKind::string || peek().kind == TokenKind::integer ||
                 peek().kind == TokenKind::floating) {
        add_arg(*test, primary());  // `x is divisibleby 3`
      }
      e = std::move(test);
    } else {
      return e;
    }
  }
}

// "(" arguments ")" appended to `call`'s args and kwargs.
void ExpressionParser::call_arguments(Expr& call) {
  expect_op("(");
  while (!accept_op(")")) {
    if (peek().kind == TokenKind::name && is_op("=", 1)) {
      std::string key = next().text;
      next();
      add_kwarg(call, std::move(key), expression());
    } else {
      if (!call.kwargs.empty()) fail("a positional argument after a keyword argument");
      add_arg(call, expression());
    }
    if (!is_op(")")) expect_op(",");
  }
}

ExprPtr ExpressionParser::postfix(ExprPtr e) {
  while (true) {
    if (accept_op(".")) {
      const Token& t = peek();
      if (t.kind == TokenKind::name) {
        ExprPtr a = node(Expr::Kind::attr, t.line, t.text);
        next();
        add_arg(*a, std::move(e));
        e = std::move(a);
      } else if (t.kind == TokenKind::integer) {
        ExprPtr i = node(Expr::Kind::index, t.line);
        add_arg(*i, std::move(e));
        add_arg(*i, literal(parse_integer(t), t.line));
        next();
        e = std::move(i);
      } else {
        fail("expected an attribute name after '.', found " + describe(t));
      }
    } else if (is_op("[")) {
      const int line = next().line;
      e = subscript(std::move(e), line);
    } else if (is_op("(")) {
      ExprPtr c = node(Expr::Kind::call, peek().line);
      add_arg(*c, std::move(e));
      call_arguments(*c);
      e = std::move(c);
    } else {
      return e;
    }
  }
}

// After "[": an index or a slice, then "]".
ExprPtr ExpressionParser::subscript(ExprPtr object, int line) {
  ExprPtr parts[3];
  int n = 0;
  bool is_slice = false;
  while (true) {
    if (!is_op(":") && !is_op("]")) parts[n] = expression();
    if (accept_op(":")) {
      is_slice = true;
      if (++n > 2) fail("a slice takes at most three parts");
      continue;
    }
    break;
  }
  expect_op("]");
  if (!is_slice) {
    if (!parts[0]) fail("empty subscript '[]'");
    ExprPtr i = node(Expr::Kind::index, line);
    add_arg(*i, std::move(object));
    add_arg(*i, std::move(parts[0]));
    return i;
  }
  ExprPtr s = node(Expr::Kind::slice, line);
  add_arg(*s, std::move(object));
  for (ExprPtr& p : parts) add_arg(*s, std::move(p));
  return s;
}

Value ExpressionParser::parse_integer(const Token& t) const {
  int64_t v = 0;
  const auto r = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
  if (r.ec != std::errc() || r.ptr != t.text.data() + t.text.size()) {
    throw TemplateError(t.line, "integer literal out of range: " + t.text);
  }
  return Value::integer(v);
}

ExprPtr ExpressionParser::primary() {
  const Token& t = peek();
  switch (t.kind) {
    case TokenKind::integer: {
      ExprPtr e = literal(parse_integer(t), t.line);
      next();
      return e;
    }
    case TokenKind::floating: {
      const double d = std::strtod(t.text.c_str(), nullptr);
      ExprPtr e = literal(Value::floating(d), t.line);
      next();
      return e;
    }
    case TokenKind::string: {
      std::string s;
      const int line = t.line;
      while (peek().kind == TokenKind::string) s += next().text;  // 'a' 'b' is 'ab'
      return literal(Value::string(std::move(s)), line);
    }
    case TokenKind::name: {
      next();
      if (t.text == "true" || t.text == "True") return literal(Value::boolean(true), t.line);
      if (t.text == "false" || t.text == "False") return literal(Value::boolean(false), t.line);
      if (t.text == "none" || t.text == "None") return literal(Value::none(), t.line);
      if (is_one_of(t.text, {"and", "or", "not", "in", "is", "if", "else"})) {
        throw TemplateError(t.line, "unexpected keyword '" + t.text + "'");
      }
      return node(Expr::Kind::name, t.line, t.text);
    }
    case TokenKind::op:
      if (t.text == "(") return parenthesized();
      if (t.text == "[") return list_literal();
      if (t.text == "{") return dict_literal();
      [[fallthrough]];
    default:
      fail("unexpected " + describe(t) + " in an expression");
  }
}

ExprPtr ExpressionParser::parenthesized() {
  const int line = next().line;
  if (accept_op(")")) return node(Expr::Kind::tuple, line);
  ExprPtr first = expression();
  if (accept_op(")")) return first;
  ExprPtr t = node(Expr::Kind::tuple, line);
  add_arg(*t, std::move(first));
  while (accept_op(",")) {
    if (is_op(")")) break;
    add_arg(*t, expression());
  }
  expect_op(")");
  return t;
}

ExprPtr ExpressionParser::list_literal() {
  ExprPtr l = node(Expr::Kind::list, next().line);
  while (!accept_op("]")) {
    add_arg(*l, expression());
    if (!is_op("]")) expect_op(",");
  }
  return l;
}

ExprPtr ExpressionParser::dict_literal() {
  ExprPtr d = node(Expr::Kind::dict, next().line);
  while (!accept_op("}")) {
    add_arg(*d, expression());
    expect_op(":");
    add_arg(*d, expression());
    if (!is_op("}")) expect_op(",");
  }
  return d;
}

}  // namespace llama::chat
