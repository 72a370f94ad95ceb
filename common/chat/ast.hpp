// The parsed form of a chat template: expression trees and statement lists,
// each node with the template line it came from (for error messages).
//
// Depth is bounded where the tree is built, whatever syntax makes it deep
// (parentheses, or chains such as x|f|f|f, x.a.a.a, 1+1+1, x[0][0], f()()):
// add_arg refuses an expression taller than kMaxExprHeight, and the parser
// refuses statements nested deeper than kMaxNesting. So evaluating a tree
// recurses at most that deep; destroying one does not recurse at all.
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "llama/chat/template.hpp"
#include "llama/chat/value.hpp"

namespace llama::chat {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

// The tallest expression tree: a few times the 10-20 levels of the longest
// concatenations in real templates, and shallow enough that evaluating it
// (a few frames per level) takes well under a megabyte of stack.
inline constexpr int kMaxExprHeight = 256;

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
  int height = 1;        // of the tree under this node: 1 for a leaf (kept by add_arg)
  std::vector<ExprPtr> args;
  std::vector<std::pair<std::string, ExprPtr>> kwargs;

  Expr() = default;
  Expr(const Expr&) = delete;
  Expr& operator=(const Expr&) = delete;
  // Iterative: the children are taken apart in a loop, never by recursion.
  ~Expr();
};

// Appends `child` (null for an omitted part) to parent.args, or to its
// kwargs under `key`; throws TemplateError at parent's line when the tree
// would grow taller than kMaxExprHeight.
void add_arg(Expr& parent, ExprPtr child);
void add_kwarg(Expr& parent, std::string key, ExprPtr child);

namespace detail {

inline void adopt_height(Expr& parent, const ExprPtr& child) {
  if (!child) return;
  if (child->height + 1 > kMaxExprHeight) {
    throw TemplateError(parent.line, "an expression nested more than " +
                                         std::to_string(kMaxExprHeight) +
                                         " levels deep (a chain of filters, operators, "
                                         "attributes, subscripts or calls?)");
  }
  parent.height = std::max(parent.height, child->height + 1);
}

}  // namespace detail

inline void add_arg(Expr& parent, ExprPtr child) {
  detail::adopt_height(parent, child);
  parent.args.push_back(std::move(child));
}

inline void add_kwarg(Expr& parent, std::string key, ExprPtr child) {
  detail::adopt_height(parent, child);
  parent.kwargs.emplace_back(std::move(key), std::move(child));
}

// The descendants are moved into this node's own argument list, which serves
// as the stack: each one is destroyed once it has no children left, so no
// destructor runs inside another however the tree was built.
inline Expr::~Expr() {
  for (auto& [key, child] : kwargs) args.push_back(std::move(child));
  kwargs.clear();
  while (!args.empty()) {
    ExprPtr child = std::move(args.back());
    args.pop_back();
    if (!child) continue;
    for (ExprPtr& grandchild : child->args) args.push_back(std::move(grandchild));
    for (auto& [key, grandchild] : child->kwargs) args.push_back(std::move(grandchild));
    child->args.clear();
    child->kwargs.clear();
  }  // child, now childless, is destroyed here
}

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
