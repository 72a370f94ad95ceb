// The parser's view of the token stream: look-ahead, accepting and expecting
// tokens, error messages naming the line, and the nesting bound.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "lexer.hpp"
#include "llama/chat/template.hpp"

namespace llama::chat {

inline constexpr int kMaxNesting = 128;

class TokenCursor {
 public:
  explicit TokenCursor(const std::vector<Token>& tokens) : t_(tokens) {}

 protected:
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
  // One level deeper (a statement or expression inside another): refused past
  // kMaxNesting, so no template recurses the parser or the renderer without bound.
  void enter() {
    if (++depth_ > kMaxNesting) {
      fail("nested more than " + std::to_string(kMaxNesting) + " levels deep");
    }
  }
  void leave() { --depth_; }

  const std::vector<Token>& t_;
  size_t at_ = 0;
  int depth_ = 0;
};

}  // namespace llama::chat
