// Renders a parsed Program: scopes, statements and expressions. Built-in
// filters, tests and methods live in their own files (context.hpp).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
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
  // A running for loop. `loop` is made from it only when a template reads it
  // whole; `loop.index` and friends are read from here, so an iteration
  // allocates nothing for them.
  struct Loop {
    const Array* items = nullptr;
    int64_t index = 0;
    Value object;  // `loop` as a dict, for index `object_index`
    int64_t object_index = -1;
  };
  struct Scope {
    std::vector<std::pair<std::string, Value>> vars;
    Loop* loop = nullptr;  // a for loop's scope: the name `loop` is its state
  };

  Flow exec(const Body& body, std::string& out);
  Flow exec(const Stmt& s, std::string& out);
  void exec_for(const Stmt& s, std::string& out);
  void assign(const std::vector<ExprPtr>& targets, const Value& value, int line);
  void set_variable(const std::string& name, Value value);
  const Value* lookup(const std::string& name);
  // The loop `loop` names here, unless a variable of that name hides it.
  Loop* current_loop();
  static Value loop_attribute(const Loop& loop, std::string_view name);

  Value eval(const Expr& e);
  Value eval_node(const Expr& e);
  Value eval_attr(const Value& object, const std::string& name);
  Value eval_index(const Value& object, const Value& key);
  Value eval_slice(const Expr& e);
  Value eval_call(const Expr& e);
  Value eval_binary(const Expr& e);
  Value eval_concatenation(const Expr& e);
  Value call_global(const std::string& name, const Arguments& args, int line);
  Value call_macro(const Stmt& macro, const Arguments& args);
  void eval_arguments(const Expr& e, size_t first, std::vector<Value>& positional, Kwargs& keyword);

  RenderContext& ctx_;
  const Object& globals_;
  // The globals by name when there are many (a JSON of thousands of keys),
  // so a name costs the same however many there are.
  std::unordered_map<std::string_view, const Value*> global_index_;
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
