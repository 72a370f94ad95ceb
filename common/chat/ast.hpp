// The parsed form of a chat template: expression trees and statement lists,
// each node with the template line it came from (for error messages).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "llama/chat/template.hpp"
#include "llama/chat/value.hpp"

namespace llama::chat {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
  enum class Kind {
    literal,  // value
    name,     // name
    attr,     // args[0].name
    index,    // args[0][args[1]]
    slice,    // args[0][args[1]:args[2]:args[3]] (null args for omitted parts)
    call,     // args[0](args[1..], kwargs)
    filter,   // args[0] | name(args[1..], kwargs)
    test,     // args[0] is [not] name
    unary,    // name in {"not", "-", "+"} applied to args[0]
    binary,   // args[0] name args[1]; name is the operator ("and", "in", "not in", "+", ...)
    ternary,  // args[0] if args[1] else args[2] (args[2] null: undefined)
    list,     // [args...]
    tuple,    // (args...)
    dict,     // {args[0]: args[1], args[2]: args[3], ...}
  };
  Kind kind = Kind::literal;
  int line = 1;
  std::string name;
  Value value;
  bool negated = false;  // test: `is not`
  std::vector<ExprPtr> args;
  std::vector<std::pair<std::string, ExprPtr>> kwargs;
};

struct Stmt;
using Body = std::vector<std::unique_ptr<Stmt>>;

struct Stmt {
  enum class Kind {
    text,       // text
    output,     // {{ expr }}
    set,        // {% set targets = expr %} (one target, a tuple of names, or ns.attr)
    set_block,  // {% set targets %}body{% endset %}
    if_,        // branches: (condition, body)...; a null condition is the else
    for_,       // {% for targets in expr [if cond] %}body{% else %}else_body{% endfor %}
    macro,  // {% macro name(params) %}body{% endmacro %}: params in targets, defaults in branches
    break_,
    continue_,
  };
  Kind kind = Kind::text;
  int line = 1;
  std::string text;
  ExprPtr expr;                  // output / set value / for iterable
  ExprPtr cond;                  // for: the `if` filter
  std::vector<ExprPtr> targets;  // set / for: names or ns.attr (Expr name / attr)
  Body body;
  Body else_body;
  std::vector<std::pair<ExprPtr, Body>> branches;
};

struct Program {
  Body body;
};

}  // namespace llama::chat
