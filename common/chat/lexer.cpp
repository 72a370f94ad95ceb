// Template lexer: text runs with Hugging Face's whitespace rules, then the
// tokens of each tag.
#include "lexer.hpp"

#include <cstdint>

#include "llama/chat/template.hpp"
#include "text.hpp"
#include "tokenizers/bpe/utf8.hpp"

namespace llama::chat {
namespace {

constexpr std::string_view kOperators[] = {"**", "//", "==", "!=", "<=", ">=", "(", ")", "[",
                                           "]",  "{",  "}",  ",",  ".",  ":",  "|", "+", "-",
                                           "*",  "/",  "%",  "~",  "<",  ">",  "="};

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_name_char(char c) { return is_name_start(c) || is_digit(c); }
bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

class Lexer {
 public:
  explicit Lexer(std::string_view src) : src_(src) {
    // Jinja's keep_trailing_newline=False: one final newline is not output.
    if (!src_.empty() && src_.back() == '\n') src_.remove_suffix(1);
  }

  std::vector<Token> run() {
    bool strip_next = false;    // the previous tag ended with '-'
    bool trim_newline = false;  // the previous tag was a block or comment (trim_blocks)
    while (pos_ < src_.size()) {
      const size_t tag = find_tag(pos_);
      size_t begin = pos_, end = tag;
      if (strip_next) {
        while (begin < end && text::whitespace_at(src_, begin) != 0) {
          begin += text::whitespace_at(src_, begin);
        }
      } else if (trim_newline && begin < end && src_[begin] == '\n') {
        ++begin;
      }
      const bool at_tag = tag < src_.size();
      const char kind = at_tag ? src_[tag + 1] : 0;
      if (at_tag && src_.size() > tag + 2 && src_[tag + 2] == '-') {
        end = begin + text::trim_right(src_.substr(begin, end - begin)).size();
      } else if (at_tag && (kind == '%' || kind == '#')) {
        // lstrip_blocks: spaces and tabs from the start of the line to a block or comment.
        size_t p = tag;
        while (p > 0 && (src_[p - 1] == ' ' || src_[p - 1] == '\t')) --p;
        if ((p == 0 || src_[p - 1] == '\n') && p >= begin) end = p;
      }
      if (end > begin) push(TokenKind::text, std::string(src_.substr(begin, end - begin)), begin);
      advance_to(tag);
      if (!at_tag) break;
      if (kind == '#') {
        strip_next = comment();
        trim_newline = true;
      } else {
        strip_next = tag_tokens(kind == '%');
        trim_newline = kind == '%';
      }
    }
    tokens_.push_back(Token{TokenKind::end, "", line_});
    return std::move(tokens_);
  }

 private:
  size_t find_tag(size_t from) const {
    for (size_t i = from; i + 1 < src_.size(); ++i) {
      if (src_[i] == '{' && (src_[i + 1] == '{' || src_[i + 1] == '%' || src_[i + 1] == '#')) {
        return i;
      }
    }
    return src_.size();
  }

  // Moves the cursor, counting lines.
  void advance_to(size_t to) {
    for (; pos_ < to; ++pos_) {
      if (src_[pos_] == '\n') ++line_;
    }
  }

  int line_at(size_t at) const {
    int line = line_;
    for (size_t i = pos_; i < at && i < src_.size(); ++i) {
      if (src_[i] == '\n') ++line;
    }
    return line;
  }

  void push(TokenKind kind, std::string text, size_t at) {
    tokens_.push_back(Token{kind, std::move(text), line_at(at)});
  }

  [[noreturn]] void fail(size_t at, const std::string& why) const {
    throw TemplateError(line_at(at), why);
  }

  // At "{#": skips to "#}". Returns whether it ended with "-#}".
  bool comment() {
    const size_t close = src_.find("#}", pos_ + 2);
    if (close == std::string_view::npos) fail(pos_, "unterminated comment '{#'");
    const bool strip = close > pos_ + 2 && src_[close - 1] == '-';
    advance_to(close + 2);
    return strip;
  }

  // At "{%" or "{{": the open token, the tokens inside, the close token.
  // Returns whether the tag ended with '-'.
  bool tag_tokens(bool statement) {
    const size_t open = pos_;
    push(statement ? TokenKind::stmt_open : TokenKind::expr_open, statement ? "{%" : "{{", open);
    advance_to(pos_ + ((src_.size() > pos_ + 2 && src_[pos_ + 2] == '-') ? 3 : 2));
    int depth = 0;  // open '{' inside an expression, so "}}" of a dict literal is not the close
    while (true) {
      while (pos_ < src_.size() && is_blank(src_[pos_])) advance_to(pos_ + 1);
      if (pos_ >= src_.size()) {
        fail(open, statement ? "unterminated statement '{%'" : "unterminated expression '{{'");
      }
      const std::string_view rest = src_.substr(pos_);
      const std::string_view close = statement ? "%}" : "}}";
      if (statement || depth == 0) {
        if (rest.starts_with(close) ||
            (rest.size() > 2 && rest[0] == '-' && rest.substr(1).starts_with(close))) {
          const bool strip = rest[0] == '-';
          push(statement ? TokenKind::stmt_close : TokenKind::expr_close, std::string(close), pos_);
          advance_to(pos_ + (strip ? 3 : 2));
          return strip;
        }
      }
      const char c = rest[0];
      if (c == '\'' || c == '"') {
        string_literal();
      } else if (is_digit(c)) {
        number();
      } else if (is_name_start(c)) {
        size_t n = 1;
        while (n < rest.size() && is_name_char(rest[n])) ++n;
        push(TokenKind::name, std::string(rest.substr(0, n)), pos_);
        advance_to(pos_ + n);
      } else {
        std::string_view op;
        for (const std::string_view candidate : kOperators) {
          if (rest.starts_with(candidate)) {
            op = candidate;
            break;
          }
        }
        if (op.empty()) {
          const auto byte = static_cast<unsigned char>(c);
          fail(pos_, byte >= 0x20 && byte < 0x7f
                         ? "unexpected character '" + std::string(1, c) + "'"
                         : "unexpected byte 0x" + std::string(1, "0123456789abcdef"[byte >> 4]) +
                               "0123456789abcdef"[byte & 15]);
        }
        if (op == "{") ++depth;
        if (op == "}" && --depth < 0) fail(pos_, "unexpected '}'");
        push(TokenKind::op, std::string(op), pos_);
        advance_to(pos_ + op.size());
      }
    }
  }

  void number() {
    const size_t start = pos_;
    size_t i = pos_;
    while (i < src_.size() && is_digit(src_[i])) ++i;
    // After '.', "messages.0" is an index: no fraction.
    const bool after_dot =
        !tokens_.empty() && tokens_.back().kind == TokenKind::op && tokens_.back().text == ".";
    bool is_float = false;
    if (!after_dot && i + 1 < src_.size() && src_[i] == '.' && is_digit(src_[i + 1])) {
      is_float = true;
      ++i;
      while (i < src_.size() && is_digit(src_[i])) ++i;
    }
    if (!after_dot && i < src_.size() && (src_[i] == 'e' || src_[i] == 'E')) {
      size_t j = i + 1;
      if (j < src_.size() && (src_[j] == '+' || src_[j] == '-')) ++j;
      if (j < src_.size() && is_digit(src_[j])) {
        is_float = true;
        i = j;
        while (i < src_.size() && is_digit(src_[i])) ++i;
      }
    }
    push(is_float ? TokenKind::floating : TokenKind::integer,
         std::string(src_.substr(start, i - start)), start);
    advance_to(i);
  }

  // Python string literal escapes; an unknown escape keeps its backslash.
  void string_literal() {
    const size_t start = pos_;
    const char quote = src_[pos_];
    std::string value;
    size_t i = pos_ + 1;
    while (true) {
      if (i >= src_.size()) fail(start, "unterminated string literal");
      const char c = src_[i];
      if (c == quote) break;
      if (c != '\\') {
        value += c;
        ++i;
        continue;
      }
      if (i + 1 >= src_.size()) fail(start, "unterminated string literal");
      const char e = src_[i + 1];
      i += 2;
      switch (e) {
        case 'n':
          value += '\n';
          break;
        case 't':
          value += '\t';
          break;
        case 'r':
          value += '\r';
          break;
        case 'b':
          value += '\b';
          break;
        case 'f':
          value += '\f';
          break;
        case 'v':
          value += '\v';
          break;
        case '0':
          value += '\0';
          break;
        case '\\':
          value += '\\';
          break;
        case '\'':
          value += '\'';
          break;
        case '"':
          value += '"';
          break;
        case '\n':
          break;  // a backslash-newline continues the line
        case 'x':
        case 'u':
        case 'U': {
          const size_t digits = e == 'x' ? 2 : e == 'u' ? 4 : 8;
          uint32_t cp = 0;
          for (size_t k = 0; k < digits; ++k) {
            const int h = i + k < src_.size() ? hex_value(src_[i + k]) : -1;
            if (h < 0) fail(start, std::string("bad \\") + e + " escape in a string literal");
            cp = cp * 16 + static_cast<uint32_t>(h);
          }
          if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
            fail(start, "escape outside Unicode in a string literal");
          }
          bpe::append_code_point(value, cp);
          i += digits;
          break;
        }
        default:
          value += '\\';
          value += e;
      }
    }
    push(TokenKind::string, std::move(value), start);
    advance_to(i + 1);
  }

  std::string_view src_;
  size_t pos_ = 0;
  int line_ = 1;
  std::vector<Token> tokens_;
};

}  // namespace

std::vector<Token> tokenize(std::string_view source) { return Lexer(source).run(); }

}  // namespace llama::chat
