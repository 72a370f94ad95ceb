// Recursive-descent parser for the chat-template subset of Jinja. Precedence,
// loosest first (as Jinja's own parser): `x if c else y`, or, and, not,
// comparisons and in / not in, + -, ~, * / // %, **, unary - +, then
// postfix (.attr, [index], [a:b:c], calls), filters (|) and tests (is).
#include "parser.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <initializer_list>
#include <string_view>

namespace llama::chat {
namespace {

// Jinja statements this engine does not implement: refused by name.
constexpr std::string_view kUnsupportedStatements[] = {
    "macro", "call", "filter", "raw",        "include", "import",     "from",         "extends",
    "block", "with", "do",     "autoescape", "trans",   "generation", "endgeneration"};

bool is_one_of(std::string_view s, std::initializer_list<std::string_view> set) {
  for (const std::string_view x : set) {
    if (s == x) return true;
  }
  return false;
}

class Parser {
 public:
  explicit Parser(const std::vector<Token>& tokens) : t_(tokens) {}

  Program program() {
    Program p;
    std::string end;
    p.body = body({}, end, 0, "");
    return p;
  }

 private:
  // --- tokens ---
  const Token& peek(size_t ahead = 0) const {
    const size_t i = std::min(at_ + ahead, t_.size() - 1);
    return t_[i];
  }
  const Token& next() {
    const Token& t = peek();
    if (at_ < t_.size() - 1) ++at_;
    return t;
  }
  bool is_op(std::string_view op, size_t ahead = 0) const {
    return peek(ahead).kind == TokenKind::op && peek(ahead).text == op;
  }
  bool is_name(std::string_view name, size_t ahead = 0) const {
    return peek(ahead).kind == TokenKind::name && peek(ahead).text == name;
  }
  bool accept_op(std::string_view op) {
    if (!is_op(op)) return false;
    next();
    return true;
  }
  bool accept_name(std::string_view name) {
    if (!is_name(name)) return false;
    next();
    return true;
  }
  [[noreturn]] void fail(const std::string& why) const { throw TemplateError(peek().line, why); }
  static std::string describe(const Token& t) {
    switch (t.kind) {
      case TokenKind::text:
        return "text";
      case TokenKind::stmt_open:
        return "'{%'";
      case TokenKind::stmt_close:
        return "'%}'";
      case TokenKind::expr_open:
        return "'{{'";
      case TokenKind::expr_close:
        return "'}}'";
      case TokenKind::end:
        return "the end of the template";
      case TokenKind::string:
        return "a string";
      default:
        return "'" + t.text + "'";
    }
  }
  void expect_op(std::string_view op) {
    if (!accept_op(op)) fail("expected '" + std::string(op) + "', found " + describe(peek()));
  }
  void expect(TokenKind kind, std::string_view what) {
    if (peek().kind != kind) fail("expected " + std::string(what) + ", found " + describe(peek()));
    next();
  }
  void enter(int& depth) const {
    if (++depth > kMaxNesting)
      fail("nested more than " + std::to_string(kMaxNesting) + " levels deep");
  }

  // --- statements ---

  // Statements up to one of `ends` ({% endfor %} ...), which is left unread;
  // its name goes to `found`. At the end of the template with `ends` given:
  // error naming what was opened at `open_line`.
  Body body(std::initializer_list<std::string_view> ends, std::string& found, int open_line,
            std::string_view opened) {
    Body out;
    while (true) {
      const Token& t = peek();
      if (t.kind == TokenKind::end) {
        if (ends.size() == 0) return out;
        throw TemplateError(
            open_line, "'" + std::string(opened) + "' has no {% end" + std::string(opened) + " %}");
      }
      if (t.kind == TokenKind::text) {
        auto s = std::make_unique<Stmt>();
        s->kind = Stmt::Kind::text;
        s->line = t.line;
        s->text = t.text;
        next();
        out.push_back(std::move(s));
      } else if (t.kind == TokenKind::expr_open) {
        auto s = std::make_unique<Stmt>();
        s->kind = Stmt::Kind::output;
        s->line = t.line;
        next();
        s->expr = expression();
        expect(TokenKind::expr_close, "'}}'");
        out.push_back(std::move(s));
      } else if (t.kind == TokenKind::stmt_open) {
        if (peek(1).kind == TokenKind::name && is_one_of(peek(1).text, ends)) {
          found = peek(1).text;
          return out;
        }
        out.push_back(statement());
      } else {
        fail("unexpected " + describe(t));
      }
    }
  }

  // After the statement's keyword: "%}".
  void close_tag() { expect(TokenKind::stmt_close, "'%}'"); }

  // "{% name %}" where name is what body() stopped at.
  void end_tag() {
    next();  // {%
    next();  // the keyword
    close_tag();
  }

  std::unique_ptr<Stmt> statement() {
    next();  // {%
    const Token& kw = peek();
    if (kw.kind != TokenKind::name) fail("expected a statement name, found " + describe(kw));
    const std::string name = kw.text;
    const int line = kw.line;
    for (const std::string_view u : kUnsupportedStatements) {
      if (name == u) fail("unsupported statement '" + name + "'");
    }
    next();
    enter(depth_);
    auto s = std::make_unique<Stmt>();
    s->line = line;
    if (name == "set") {
      set_statement(*s);
    } else if (name == "if") {
      if_statement(*s);
    } else if (name == "for") {
      for_statement(*s);
    } else if (name == "break" || name == "continue") {
      if (loops_ == 0) fail("'" + name + "' outside a for loop");
      s->kind = name == "break" ? Stmt::Kind::break_ : Stmt::Kind::continue_;
      close_tag();
    } else if (is_one_of(name, {"endif", "endfor", "endset", "elif", "else"})) {
      fail("'" + name + "' without a matching opening statement");
    } else {
      fail("unknown statement '" + name + "'");
    }
    --depth_;
    return s;
  }

  // Assignment targets: a name, ns.attr, or names separated by commas.
  std::vector<ExprPtr> targets(bool allow_attr) {
    std::vector<ExprPtr> out;
    const bool paren = accept_op("(");
    do {
      const Token& t = peek();
      if (t.kind != TokenKind::name || is_one_of(t.text, {"in", "true", "false", "none"})) {
        fail("expected a variable name, found " + describe(t));
      }
      auto e = std::make_unique<Expr>();
      e->kind = Expr::Kind::name;
      e->line = t.line;
      e->name = t.text;
      next();
      if (allow_attr && accept_op(".")) {
        if (peek().kind != TokenKind::name) fail("expected an attribute name after '.'");
        auto a = std::make_unique<Expr>();
        a->kind = Expr::Kind::attr;
        a->line = e->line;
        a->name = next().text;
        a->args.push_back(std::move(e));
        e = std::move(a);
      }
      out.push_back(std::move(e));
    } while (accept_op(","));
    if (paren) expect_op(")");
    return out;
  }

  void set_statement(Stmt& s) {
    s.targets = targets(true);
    if (accept_op("=")) {
      s.kind = Stmt::Kind::set;
      s.expr = expression_list();
      close_tag();
      return;
    }
    if (s.targets.size() != 1) fail("a {% set %} block takes one target");
    s.kind = Stmt::Kind::set_block;
    close_tag();
    std::string end;
    s.body = body({"endset"}, end, s.line, "set");
    end_tag();
  }

  void if_statement(Stmt& s) {
    s.kind = Stmt::Kind::if_;
    ExprPtr cond = expression();
    close_tag();
    while (true) {
      std::string end;
      Body b = body({"elif", "else", "endif"}, end, s.line, "if");
      s.branches.emplace_back(std::move(cond), std::move(b));
      if (end == "endif") {
        end_tag();
        return;
      }
      next();  // {%
      next();  // elif / else
      if (end == "elif") {
        cond = expression();
        close_tag();
      } else {
        close_tag();
        std::string last;
        Body e = body({"endif"}, last, s.line, "if");
        s.branches.emplace_back(nullptr, std::move(e));
        end_tag();
        return;
      }
    }
  }

  void for_statement(Stmt& s) {
    s.kind = Stmt::Kind::for_;
    s.targets = targets(false);
    if (!accept_name("in")) fail("expected 'in' in the for statement, found " + describe(peek()));
    // The iterable stops before a trailing `if` (the loop filter), so no ternary here.
    s.expr = or_expr();
    if (accept_name("if")) s.cond = or_expr();
    if (is_name("recursive")) fail("unsupported construct 'recursive' loop");
    close_tag();
    ++loops_;
    std::string end;
    s.body = body({"else", "endfor"}, end, s.line, "for");
    --loops_;
    if (end == "else") {
      next();
      next();
      close_tag();
      s.else_body = body({"endfor"}, end, s.line, "for");
    }
    end_tag();
  }

  // --- expressions ---

  static ExprPtr node(Expr::Kind kind, int line, std::string name = {}) {
    auto e = std::make_unique<Expr>();
    e->kind = kind;
    e->line = line;
    e->name = std::move(name);
    return e;
  }
  static ExprPtr binary(std::string op, ExprPtr a, ExprPtr b) {
    ExprPtr e = node(Expr::Kind::binary, a->line, std::move(op));
    e->args.push_back(std::move(a));
    e->args.push_back(std::move(b));
    return e;
  }

  // An expression, or several separated by commas (a tuple without parentheses).
  ExprPtr expression_list() {
    ExprPtr first = expression();
    if (!is_op(",")) return first;
    ExprPtr t = node(Expr::Kind::tuple, first->line);
    t->args.push_back(std::move(first));
    while (accept_op(",")) t->args.push_back(expression());
    return t;
  }

  ExprPtr expression() {
    enter(depth_);
    ExprPtr e = or_expr();
    if (accept_name("if")) {
      ExprPtr t = node(Expr::Kind::ternary, e->line);
      t->args.push_back(std::move(e));
      t->args.push_back(or_expr());
      t->args.push_back(accept_name("else") ? expression() : nullptr);
      e = std::move(t);
    }
    --depth_;
    return e;
  }

  ExprPtr or_expr() {
    ExprPtr e = and_expr();
    while (accept_name("or")) e = binary("or", std::move(e), and_expr());
    return e;
  }

  ExprPtr and_expr() {
    ExprPtr e = not_expr();
    while (accept_name("and")) e = binary("and", std::move(e), not_expr());
    return e;
  }

  ExprPtr not_expr() {
    if (is_name("not")) {
      const int line = next().line;
      enter(depth_);
      ExprPtr e = node(Expr::Kind::unary, line, "not");
      e->args.push_back(not_expr());
      --depth_;
      return e;
    }
    return compare();
  }

  ExprPtr compare() {
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

  ExprPtr math1() {
    ExprPtr e = concat();
    while (is_op("+") || is_op("-")) {
      const std::string op = next().text;
      e = binary(op, std::move(e), concat());
    }
    return e;
  }

  ExprPtr concat() {
    ExprPtr e = math2();
    while (accept_op("~")) e = binary("~", std::move(e), math2());
    return e;
  }

  ExprPtr math2() {
    ExprPtr e = power();
    while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
      const std::string op = next().text;
      e = binary(op, std::move(e), power());
    }
    return e;
  }

  ExprPtr power() {
    ExprPtr e = unary();
    while (accept_op("**")) e = binary("**", std::move(e), unary());
    return e;
  }

  ExprPtr unary() {
    enter(depth_);
    ExprPtr e;
    if (is_op("-") || is_op("+")) {
      const Token& t = next();
      e = node(Expr::Kind::unary, t.line, t.text);
      e->args.push_back(unary_operand());
    } else {
      e = postfix(primary());
    }
    e = filters_and_tests(std::move(e));
    --depth_;
    return e;
  }

  // The operand of unary - or +: no filters (`-x|abs` is `(-x)|abs`).
  ExprPtr unary_operand() {
    enter(depth_);
    ExprPtr e;
    if (is_op("-") || is_op("+")) {
      const Token& t = next();
      e = node(Expr::Kind::unary, t.line, t.text);
      e->args.push_back(unary_operand());
    } else {
      e = postfix(primary());
    }
    --depth_;
    return e;
  }

  ExprPtr filters_and_tests(ExprPtr e) {
    while (true) {
      if (accept_op("|")) {
        if (peek().kind != TokenKind::name) fail("expected a filter name after '|'");
        const Token& t = next();
        ExprPtr f = node(Expr::Kind::filter, t.line, t.text);
        f->args.push_back(std::move(e));
        if (is_op("(")) call_arguments(*f);
        e = std::move(f);
      } else if (is_name("is")) {
        const int line = next().line;
        ExprPtr test = node(Expr::Kind::test, line);
        test->negated = accept_name("not");
        if (peek().kind != TokenKind::name) fail("expected a test name after 'is'");
        test->name = next().text;
        test->args.push_back(std::move(e));
        if (is_op("(")) {
          call_arguments(*test);
        } else if (peek().kind == TokenKind::string || peek().kind == TokenKind::integer ||
                   peek().kind == TokenKind::floating) {
          test->args.push_back(primary());  // `x is divisibleby 3`
        }
        e = std::move(test);
      } else {
        return e;
      }
    }
  }

  // "(" arguments ")" appended to `call`'s args and kwargs.
  void call_arguments(Expr& call) {
    expect_op("(");
    while (!accept_op(")")) {
      if (peek().kind == TokenKind::name && is_op("=", 1)) {
        std::string key = next().text;
        next();
        call.kwargs.emplace_back(std::move(key), expression());
      } else {
        if (!call.kwargs.empty()) fail("a positional argument after a keyword argument");
        call.args.push_back(expression());
      }
      if (!is_op(")")) expect_op(",");
    }
  }

  ExprPtr postfix(ExprPtr e) {
    while (true) {
      if (accept_op(".")) {
        const Token& t = peek();
        if (t.kind == TokenKind::name) {
          ExprPtr a = node(Expr::Kind::attr, t.line, t.text);
          next();
          a->args.push_back(std::move(e));
          e = std::move(a);
        } else if (t.kind == TokenKind::integer) {
          ExprPtr i = node(Expr::Kind::index, t.line);
          i->args.push_back(std::move(e));
          i->args.push_back(literal(parse_integer(t), t.line));
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
        c->args.push_back(std::move(e));
        call_arguments(*c);
        e = std::move(c);
      } else {
        return e;
      }
    }
  }

  // After "[": an index or a slice, then "]".
  ExprPtr subscript(ExprPtr object, int line) {
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
      i->args.push_back(std::move(object));
      i->args.push_back(std::move(parts[0]));
      return i;
    }
    ExprPtr s = node(Expr::Kind::slice, line);
    s->args.push_back(std::move(object));
    for (ExprPtr& p : parts) s->args.push_back(std::move(p));
    return s;
  }

  static ExprPtr literal(Value v, int line) {
    ExprPtr e = node(Expr::Kind::literal, line);
    e->value = std::move(v);
    return e;
  }

  Value parse_integer(const Token& t) const {
    int64_t v = 0;
    const auto r = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
    if (r.ec != std::errc() || r.ptr != t.text.data() + t.text.size()) {
      throw TemplateError(t.line, "integer literal out of range: " + t.text);
    }
    return Value::integer(v);
  }

  ExprPtr primary() {
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

  ExprPtr parenthesized() {
    const int line = next().line;
    if (accept_op(")")) return node(Expr::Kind::tuple, line);
    ExprPtr first = expression();
    if (accept_op(")")) return first;
    ExprPtr t = node(Expr::Kind::tuple, line);
    t->args.push_back(std::move(first));
    while (accept_op(",")) {
      if (is_op(")")) break;
      t->args.push_back(expression());
    }
    expect_op(")");
    return t;
  }

  ExprPtr list_literal() {
    ExprPtr l = node(Expr::Kind::list, next().line);
    while (!accept_op("]")) {
      l->args.push_back(expression());
      if (!is_op("]")) expect_op(",");
    }
    return l;
  }

  ExprPtr dict_literal() {
    ExprPtr d = node(Expr::Kind::dict, next().line);
    while (!accept_op("}")) {
      d->args.push_back(expression());
      expect_op(":");
      d->args.push_back(expression());
      if (!is_op("}")) expect_op(",");
    }
    return d;
  }

  const std::vector<Token>& t_;
  size_t at_ = 0;
  int depth_ = 0;
  int loops_ = 0;
};

}  // namespace

Program parse_program(const std::vector<Token>& tokens) { return Parser(tokens).program(); }

}  // namespace llama::chat
