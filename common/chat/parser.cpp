// The statement half of the template parser: text, {{ }} and {% %} tags
// into statement lists; expressions come from ExpressionParser.
#include "parser.hpp"

#include "expression_parser.hpp"

#include <initializer_list>
#include <string_view>

namespace llama::chat {
namespace {

// Jinja statements this engine does not implement: refused by name.
constexpr std::string_view kUnsupportedStatements[] = {
    "call",  "filter", "raw", "include",    "import", "from",       "extends",
    "block", "with",   "do",  "autoescape", "trans",  "generation", "endgeneration"};

bool is_one_of(std::string_view s, std::initializer_list<std::string_view> set) {
  for (const std::string_view x : set) {
    if (s == x) return true;
  }
  return false;
}

class Parser : public ExpressionParser {
 public:
  using ExpressionParser::ExpressionParser;

  Program program() {
    Program p;
    std::string end;
    p.body = body({}, end, 0, "");
    return p;
  }

 private:
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
    enter();
    auto s = std::make_unique<Stmt>();
    s->line = line;
    if (name == "set") {
      set_statement(*s);
    } else if (name == "if") {
      if_statement(*s);
    } else if (name == "for") {
      for_statement(*s);
    } else if (name == "macro") {
      macro_statement(*s);
    } else if (name == "break" || name == "continue") {
      if (loops_ == 0) fail("'" + name + "' outside a for loop");
      s->kind = name == "break" ? Stmt::Kind::break_ : Stmt::Kind::continue_;
      close_tag();
    } else if (is_one_of(name, {"endif", "endfor", "endset", "endmacro", "elif", "else"})) {
      fail("'" + name + "' without a matching opening statement");
    } else {
      fail("unknown statement '" + name + "'");
    }
    leave();
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
        add_arg(*a, std::move(e));
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

  // {% macro name(a, b=default) %}: the parameter names in targets, each
  // default (or null) in branches[i].first.
  void macro_statement(Stmt& s) {
    s.kind = Stmt::Kind::macro;
    if (peek().kind != TokenKind::name) fail("expected a macro name, found " + describe(peek()));
    s.text = next().text;
    expect_op("(");
    while (!accept_op(")")) {
      if (peek().kind != TokenKind::name)
        fail("expected a parameter name, found " + describe(peek()));
      auto p = std::make_unique<Expr>();
      p->kind = Expr::Kind::name;
      p->line = peek().line;
      p->name = next().text;
      for (const auto& other : s.targets) {
        if (other->name == p->name) fail("duplicate parameter '" + p->name + "'");
      }
      ExprPtr dflt = accept_op("=") ? expression() : nullptr;
      if (!dflt && !s.branches.empty() && s.branches.back().first) {
        fail("parameter '" + p->name + "' without a default after one with a default");
      }
      s.targets.push_back(std::move(p));
      s.branches.emplace_back(std::move(dflt), Body{});
      if (!is_op(")")) expect_op(",");
    }
    close_tag();
    const int loops = loops_;
    loops_ = 0;  // break/continue do not reach out of a macro
    std::string end;
    s.body = body({"endmacro"}, end, s.line, "macro");
    loops_ = loops;
    end_tag();
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

  int loops_ = 0;
};

}  // namespace

Program parse_program(const std::vector<Token>& tokens) { return Parser(tokens).program(); }

}  // namespace llama::chat
