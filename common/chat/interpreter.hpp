// Renders a parsed Program: scopes, statements and expressions. Built-in
// filters, tests and methods live in their own files (context.hpp).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "ast.hpp"
#include "context.hpp"

namespace llama::chat {

class Interpreter {
 public:
  Interpreter(RenderContext& ctx, const Object& globals);

  // Appends what `program` renders to `out`. Throws TemplateError.
  void run(const Program& program, std::string& out);

 private:
  enum class Flow { normal, break_loop, continue_loop };
  using Scope = std::vector<std::pair<std::string, Value>>;

  Flow exec(const Body& body, std::string& out);
  Flow exec(const Stmt& s, std::string& out);
  void exec_for(const Stmt& s, std::string& out);
  void assign(const std::vector<ExprPtr>& targets, const Value& value, int line);
  void set_variable(const std::string& name, Value value);
  const Value* lookup(const std::string& name) const;

  Value eval(const Expr& e);
  Value eval_node(const Expr& e);
  Value eval_attr(const Value& object, const std::string& name);
  Value eval_index(const Value& object, const Value& key);
  Value eval_slice(const Expr& e);
  Value eval_call(const Expr& e);
  Value eval_binary(const Expr& e);
  Value call_global(const std::string& name, const Arguments& args, int line);
  Value call_macro(const Stmt& macro, const Arguments& args);
  void eval_arguments(const Expr& e, size_t first, std::vector<Value>& positional, Kwargs& keyword);

  RenderContext& ctx_;
  const Object& globals_;
  std::vector<Scope> scopes_;
  int macro_depth_ = 0;  // macros calling macros, bounded: each call recurses the interpreter
  int depth_ = 0;        // statements and expressions being evaluated, one inside another

  // Counts one level of evaluation for its lifetime; the parser bounds nesting
  // within one template text, this bounds it across macro calls too (the stack).
  struct Nested {
    explicit Nested(Interpreter& i);
    ~Nested() { --self.depth_; }
    Interpreter& self;
  };
};

}  // namespace llama::chat
