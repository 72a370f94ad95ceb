// The template interpreter: statements write to the output, expressions
// evaluate to Values. Every node counts as work (RenderContext) so endless
// or runaway templates stop with an error instead of hanging.
#include "interpreter.hpp"

#include <cmath>
#include <ctime>
#include <optional>
#include <unordered_map>

#include "operators.hpp"
#include "slices.hpp"
#include "text.hpp"

namespace llama::chat {
namespace {

constexpr const char* kGlobalFunctions[] = {"range", "namespace", "raise_exception",
                                            "strftime_now"};

bool is_global_function(const std::string& name) {
  for (const char* f : kGlobalFunctions) {
    if (name == f) return true;
  }
  return false;
}

// Python's index normalisation: negative counts from the end; nullopt outside.
std::optional<size_t> normalize_index(int64_t i, size_t size) {
  const auto n = static_cast<int64_t>(size);
  if (i < 0) i += n;  // i >= INT64_MIN and n >= 0: no overflow
  if (i < 0 || i >= n) return std::nullopt;
  return static_cast<size_t>(i);
}

}  // namespace

Interpreter::Nested::Nested(Interpreter& i) : self(i) {
  constexpr int kMaxDepth = 1000;  // a few MB of stack even under AddressSanitizer
  if (++self.depth_ > kMaxDepth) {
    --self.depth_;
    throw Error("the template nests deeper than " + std::to_string(kMaxDepth) +
                " levels of evaluation (through macros)");
  }
}

Interpreter::Interpreter(RenderContext& ctx, const Object& globals) : ctx_(ctx), globals_(globals) {
  scopes_.emplace_back();
  if (globals_.size() > 16) {
    ctx_.work(globals_.size() / 16);
    for (const auto& [k, v] : globals_) global_index_.emplace(k, &v);  // the first of a name wins
  }
}

void Interpreter::run(const Program& program, std::string& out) { (void)exec(program.body, out); }

// --- scopes ---

// Scopes hold the few variables a template sets; a template setting
// thousands pays for the scan.
const Value* Interpreter::lookup(const std::string& name) {
  size_t scanned = 0;
  const Value* found = nullptr;
  for (auto scope = scopes_.rbegin(); scope != scopes_.rend() && !found; ++scope) {
    for (auto it = scope->vars.rbegin(); it != scope->vars.rend(); ++it) {
      ++scanned;
      if (it->first == name) {
        found = &it->second;
        break;
      }
    }
    if (!found && scope->loop && name == "loop") {
      Loop& l = *scope->loop;
      if (l.object_index != l.index) {
        Object o;
        for (const char* key : {"index", "index0", "revindex", "revindex0", "first", "last",
                                "length", "previtem", "nextitem"}) {
          o.emplace_back(key, loop_attribute(l, key));
        }
        l.object = Value::object(std::move(o));
        l.object_index = l.index;
      }
      found = &l.object;
    }
  }
  ctx_.work(scanned / 16);
  if (found) return found;
  if (!global_index_.empty()) {
    const auto it = global_index_.find(name);
    return it == global_index_.end() ? nullptr : it->second;
  }
  for (const auto& [k, v] : globals_) {
    if (k == name) return &v;
  }
  return nullptr;
}

Interpreter::Loop* Interpreter::current_loop() {
  size_t scanned = 0;
  Loop* found = nullptr;
  for (auto scope = scopes_.rbegin(); scope != scopes_.rend(); ++scope) {
    scanned += scope->vars.size();
    bool hidden = false;  // a variable named loop hides it
    for (const auto& [k, v] : scope->vars) hidden = hidden || k == "loop";
    if (hidden || scope->loop) {
      found = hidden ? nullptr : scope->loop;
      break;
    }
  }
  ctx_.work(scanned / 16);
  return found;
}

Value Interpreter::loop_attribute(const Loop& l, std::string_view name) {
  const int64_t i = l.index, n = static_cast<int64_t>(l.items->size());
  const auto at = static_cast<size_t>(i);
  if (name == "index") return Value::integer(i + 1);
  if (name == "index0") return Value::integer(i);
  if (name == "revindex") return Value::integer(n - i);
  if (name == "revindex0") return Value::integer(n - i - 1);
  if (name == "first") return Value::boolean(i == 0);
  if (name == "last") return Value::boolean(i == n - 1);
  if (name == "length") return Value::integer(n);
  if (name == "previtem") return i > 0 ? (*l.items)[at - 1] : Value();
  if (name == "nextitem") return i + 1 < n ? (*l.items)[at + 1] : Value();
  return Value();
}

void Interpreter::set_variable(const std::string& name, Value value) {
  auto& vars = scopes_.back().vars;
  ctx_.work(vars.size() / 16);
  for (auto& [k, v] : vars) {
    if (k == name) {
      v = std::move(value);
      return;
    }
  }
  vars.emplace_back(name, std::move(value));
}

void Interpreter::assign(const std::vector<ExprPtr>& targets, const Value& value, int line) {
  const auto assign_one = [&](const Expr& target, const Value& v) {
    if (target.kind == Expr::Kind::name) {
      set_variable(target.name, v);
      return;
    }
    // ns.attr = v: only namespaces have settable attributes.
    const Value* object = lookup(target.args[0]->name);
    if (object == nullptr || !object->is(Value::Kind::ns)) {
      throw TemplateError(line, "cannot set attribute '" + target.name + "' of '" +
                                    target.args[0]->name + "': not a namespace");
    }
    if (v.holds_namespace()) throw TemplateError(line, "a namespace cannot hold a namespace");
    Object& entries = object->namespace_entries();
    ctx_.work(entries.size() / 16);
    for (auto& [k, old] : entries) {
      if (k == target.name) {
        old = v;
        return;
      }
    }
    entries.emplace_back(target.name, v);
  };
  if (targets.size() == 1) {
    assign_one(*targets[0], value);
    return;
  }
  if (!value.is(Value::Kind::array) || value.as_array().size() != targets.size()) {
    throw TemplateError(line, "cannot unpack " + std::string(value.kind_name()) + " into " +
                                  std::to_string(targets.size()) + " variables");
  }
  for (size_t i = 0; i < targets.size(); ++i) assign_one(*targets[i], value.as_array()[i]);
}

// --- statements ---

Interpreter::Flow Interpreter::exec(const Body& body, std::string& out) {
  for (const auto& s : body) {
    const Flow f = exec(*s, out);
    if (f != Flow::normal) return f;
  }
  return Flow::normal;
}

Interpreter::Flow Interpreter::exec(const Stmt& s, std::string& out) {
  try {
    const Nested nested(*this);
    ctx_.work();
    switch (s.kind) {
      case Stmt::Kind::text:
        ctx_.check_size(out.size() + s.text.size(), "the output");
        out += s.text;
        break;
      case Stmt::Kind::output: {
        const std::string text = ctx_.text_of(eval(*s.expr));
        ctx_.check_size(out.size() + text.size(), "the output");
        out += text;
        break;
      }
      case Stmt::Kind::set:
        assign(s.targets, eval(*s.expr), s.line);
        break;
      case Stmt::Kind::set_block: {
        std::string captured;
        (void)exec(s.body, captured);
        assign(s.targets, ctx_.string(std::move(captured)), s.line);
        break;
      }
      case Stmt::Kind::if_:
        for (const auto& [cond, body] : s.branches) {
          if (cond == nullptr || eval(*cond).truthy()) return exec(body, out);
        }
        break;
      case Stmt::Kind::for_:
        exec_for(s, out);
        break;
      case Stmt::Kind::macro:
        set_variable(s.text, Value::macro(s.text, &s));
        break;
      case Stmt::Kind::break_:
        return Flow::break_loop;
      case Stmt::Kind::continue_:
        return Flow::continue_loop;
    }
    ctx_.check_size(out.size(), "the output");
  } catch (const TemplateError&) {
    throw;
  } catch (const Error& e) {
    throw TemplateError(s.line, e.what());
  }
  return Flow::normal;
}

void Interpreter::exec_for(const Stmt& s, std::string& out) {
  const Value iterable = eval(*s.expr);
  if (!iterable.is(Value::Kind::array) && !iterable.is(Value::Kind::string) &&
      !iterable.is_mapping() && !iterable.is_undefined()) {  // Jinja iterates undefined as empty
    throw TemplateError(s.line, std::string("cannot iterate over a ") + iterable.kind_name());
  }
  Value items;
  try {
    items = iteration_items(ctx_, iterable);  // a list is shared, not copied
  } catch (const TemplateError&) {
    throw;
  } catch (const Error& e) {
    throw TemplateError(s.line, e.what());
  }

  scopes_.emplace_back();
  struct PopScope {
    std::vector<Scope>& scopes;
    ~PopScope() { scopes.pop_back(); }
  } pop{scopes_};

  if (s.cond) {  // the loop filter runs before loop.* is known
    Array kept;
    for (const Value& item : items.as_array()) {
      assign(s.targets, item, s.line);
      if (eval(*s.cond).truthy()) kept.push_back(item);
    }
    items = ctx_.array(std::move(kept));
  }
  Loop loop;
  loop.items = &items.as_array();
  scopes_.back().loop = &loop;
  const size_t n = loop.items->size();
  for (size_t i = 0; i < n; ++i) {
    ctx_.work();
    loop.index = static_cast<int64_t>(i);
    assign(s.targets, (*loop.items)[i], s.line);
    if (exec(s.body, out) == Flow::break_loop) break;
  }
  if (n == 0) (void)exec(s.else_body, out);
}

// --- expressions ---

Value Interpreter::eval(const Expr& e) {
  try {
    const Nested nested(*this);
    ctx_.work();
    return eval_node(e);
  } catch (const TemplateError&) {
    throw;
  } catch (const Error& err) {
    throw TemplateError(e.line, err.what());
  }
}

Value Interpreter::eval_node(const Expr& e) {
  switch (e.kind) {
    case Expr::Kind::literal:
      return e.value;
    case Expr::Kind::name: {
      if (const Value* v = lookup(e.name)) return *v;
      if (is_global_function(e.name)) return Value::callable(e.name);
      return Value();
    }
    case Expr::Kind::attr:
      if (e.args[0]->kind == Expr::Kind::name && e.args[0]->name == "loop") {
        if (const Loop* l = current_loop()) return loop_attribute(*l, e.name);
      }
      return eval_attr(eval(*e.args[0]), e.name);
    case Expr::Kind::index:
      return eval_index(eval(*e.args[0]), eval(*e.args[1]));
    case Expr::Kind::slice:
      return eval_slice(e);
    case Expr::Kind::call:
      return eval_call(e);
    case Expr::Kind::filter: {
      const Value operand = eval(*e.args[0]);
      std::vector<Value> positional;
      Kwargs keyword;
      eval_arguments(e, 1, positional, keyword);
      return apply_filter(ctx_, e.name, operand, Arguments{positional, keyword});
    }
    case Expr::Kind::test: {
      const Value operand = eval(*e.args[0]);
      std::vector<Value> positional;
      Kwargs keyword;
      eval_arguments(e, 1, positional, keyword);
      if (!keyword.empty()) throw Error("tests take no keyword arguments");
      return Value::boolean(apply_test(ctx_, e.name, operand, positional) != e.negated);
    }
    case Expr::Kind::unary: {
      const Value v = eval(*e.args[0]);
      if (e.name == "not") return Value::boolean(!v.truthy());
      return unary_minus_plus(e.name, v);
    }
    case Expr::Kind::binary:
      return eval_binary(e);
    case Expr::Kind::ternary:
      if (eval(*e.args[1]).truthy()) return eval(*e.args[0]);
      return e.args[2] ? eval(*e.args[2]) : Value();
    case Expr::Kind::list:
    case Expr::Kind::tuple: {
      Array items;
      for (const auto& a : e.args) items.push_back(eval(*a));
      return ctx_.array(std::move(items));
    }
    case Expr::Kind::dict: {
      Object entries;
      std::unordered_map<std::string, size_t> at;  // key -> entry: a repeated key replaces
      for (size_t i = 0; i + 1 < e.args.size(); i += 2) {
        const Value key = eval(*e.args[i]);
        if (!key.is(Value::Kind::string)) {
          throw Error(std::string("dict keys must be strings, got ") + key.kind_name());
        }
        Value value = eval(*e.args[i + 1]);
        const auto [it, added] = at.emplace(key.as_string(), entries.size());
        if (added) {
          entries.emplace_back(key.as_string(), std::move(value));
        } else {
          entries[it->second].second = std::move(value);
        }
      }
      return ctx_.object(std::move(entries));
    }
  }
  return Value();
}

Value Interpreter::eval_attr(const Value& object, const std::string& name) {
  if (const Value* v = ctx_.find(object, name)) return *v;
  if (has_method(object, name)) return Value::callable(name, object);
  return Value();
}

Value Interpreter::eval_index(const Value& object, const Value& key) {
  if (key.is(Value::Kind::string)) return eval_attr(object, key.as_string());
  if (!key.is(Value::Kind::integer)) {
    if (object.is_undefined()) return Value();
    throw Error(std::string("cannot index a ") + object.kind_name() + " with a " + key.kind_name());
  }
  if (object.is(Value::Kind::array)) {
    const auto at = normalize_index(key.as_int(), object.as_array().size());
    return at ? object.as_array()[*at] : Value();
  }
  if (object.is(Value::Kind::string)) {  // by code point: a walk of the string
    const std::string& s = object.as_string();
    ctx_.scan(s.size());
    const auto at = normalize_index(key.as_int(), text::code_point_count(s));
    if (!at) return Value();
    size_t pos = 0;
    for (size_t k = 0; k < *at; ++k) pos += text::code_point_length(s, pos);
    return Value::string(s.substr(pos, text::code_point_length(s, pos)));
  }
  return Value();  // undefined, as a missing key
}

Value Interpreter::eval_slice(const Expr& e) {
  const Value object = eval(*e.args[0]);
  Value parts[3];
  for (int i = 0; i < 3; ++i) {
    if (!e.args[1 + i]) continue;
    parts[i] = eval(*e.args[1 + i]);
    if (!parts[i].is(Value::Kind::integer) && !parts[i].is(Value::Kind::none)) {
      throw Error(std::string("slice indices must be integers, got ") + parts[i].kind_name());
    }
  }
  const int64_t step = parts[2].is(Value::Kind::integer) ? parts[2].as_int() : 1;
  if (step == 0) throw Error("slice step cannot be zero");
  if (object.is(Value::Kind::array)) {
    const Array& a = object.as_array();
    const SliceRange r = slice_range(parts[0], parts[1], step, a.size());
    ctx_.check_list(r.count);
    Array out;
    out.reserve(r.count);
    for_each_index(r, [&](int64_t i) { out.push_back(a[static_cast<size_t>(i)]); });
    return ctx_.array(std::move(out));
  }
  if (object.is(Value::Kind::string)) {
    const std::string& s = object.as_string();
    ctx_.scan(2 * s.size());
    ctx_.check_string(s.size());
    return ctx_.string(
        slice_string(s, slice_range(parts[0], parts[1], step, text::code_point_count(s))));
  }
  if (object.is_undefined()) return Value();
  throw Error(std::string("cannot slice a ") + object.kind_name());
}

void Interpreter::eval_arguments(const Expr& e, size_t first, std::vector<Value>& positional,
                                 Kwargs& keyword) {
  for (size_t i = first; i < e.args.size(); ++i) positional.push_back(eval(*e.args[i]));
  for (const auto& [k, v] : e.kwargs) keyword.emplace_back(k, eval(*v));
}

Value Interpreter::eval_call(const Expr& e) {
  const Expr& callee = *e.args[0];
  std::vector<Value> positional;
  Kwargs keyword;
  // obj.method(...): the method of the receiver, unless a dict holds a value by that name.
  if (callee.kind == Expr::Kind::attr) {
    const Value self = eval(*callee.args[0]);
    if (self.find(callee.name) == nullptr && has_method(self, callee.name)) {
      eval_arguments(e, 1, positional, keyword);
      return call_method(ctx_, self, callee.name, Arguments{positional, keyword});
    }
  }
  const Value f = eval(callee);
  eval_arguments(e, 1, positional, keyword);
  const Arguments args{positional, keyword};
  if (!f.is(Value::Kind::callable)) {
    const std::string what = callee.kind == Expr::Kind::name ? "'" + callee.name + "'" : "a value";
    if (f.is_undefined()) throw Error("unknown function " + what);
    throw Error(what + " is a " + f.kind_name() + ", not a function");
  }
  const Callable& c = f.as_callable();
  if (c.macro != nullptr) return call_macro(*static_cast<const Stmt*>(c.macro), args);
  if (!c.self.is_undefined()) return call_method(ctx_, c.self, c.name, args);
  return call_global(c.name, args, e.line);
}

// A macro renders its body in a scope of its own holding the parameters
// (positional, then by keyword, then the defaults) and returns the text.
Value Interpreter::call_macro(const Stmt& macro, const Arguments& args) {
  constexpr int kMaxMacroDepth = 64;
  if (macro_depth_ >= kMaxMacroDepth) {
    throw Error("macros nested more than " + std::to_string(kMaxMacroDepth) + " calls deep");
  }
  const size_t n = macro.targets.size();
  if (args.positional.size() > n) {
    throw Error("macro '" + macro.text + "' takes " + std::to_string(n) + " arguments, got " +
                std::to_string(args.positional.size()));
  }
  Scope frame;
  auto& params = frame.vars;
  for (size_t i = 0; i < n; ++i) {
    const std::string& name = macro.targets[i]->name;
    if (i < args.positional.size()) {
      params.emplace_back(name, args.positional[i]);
      continue;
    }
    const Value* given = nullptr;
    for (const auto& [k, v] : args.keyword) {
      if (k == name) given = &v;
    }
    if (given) {
      params.emplace_back(name, *given);
    } else if (macro.branches[i].first) {
      params.emplace_back(name, eval(*macro.branches[i].first));
    } else {
      params.emplace_back(name, Value());
    }
  }
  for (const auto& [k, v] : args.keyword) {
    bool known = false;
    for (const auto& t : macro.targets) known = known || t->name == k;
    if (!known) throw Error("macro '" + macro.text + "' has no parameter '" + k + "'");
  }
  ++macro_depth_;
  scopes_.push_back(std::move(frame));
  struct Restore {
    Interpreter& self;
    ~Restore() {
      self.scopes_.pop_back();
      --self.macro_depth_;
    }
  } restore{*this};
  std::string out;
  (void)exec(macro.body, out);
  return ctx_.string(std::move(out));
}

Value Interpreter::call_global(const std::string& name, const Arguments& args, int line) {
  if (name == "raise_exception") {
    args.check(name, 1, {});
    std::string message = args.positional.empty() ? "" : stringify(ctx_, args.positional[0]);
    constexpr size_t kMaxMessage = 4096;  // an error line, not a page
    if (message.size() > kMaxMessage) message = message.substr(0, kMaxMessage) + "...";
    throw TemplateError(line, std::move(message), true);
  }
  if (name == "range") {
    args.check(name, 3, {});
    int64_t v[3] = {0, 0, 1};
    for (size_t i = 0; i < args.positional.size(); ++i) {
      if (!args.positional[i].is(Value::Kind::integer)) {
        throw Error("range() takes integers, got a " + std::string(args.positional[i].kind_name()));
      }
    }
    if (args.positional.empty()) throw Error("range() takes 1 to 3 arguments");
    if (args.positional.size() == 1) {
      v[1] = args.positional[0].as_int();
    } else {
      v[0] = args.positional[0].as_int();
      v[1] = args.positional[1].as_int();
      if (args.positional.size() == 3) v[2] = args.positional[2].as_int();
    }
    if (v[2] == 0) throw Error("range() step must not be zero");
    // Count first (in 128 bits: no overflow), so a huge range is refused, not built.
    const __int128 span = static_cast<__int128>(v[1]) - v[0];
    const __int128 count =
        span == 0 || (span > 0) != (v[2] > 0) ? 0 : (span + v[2] - (v[2] > 0 ? 1 : -1)) / v[2];
    ctx_.check_list(count > static_cast<__int128>(SIZE_MAX) ? SIZE_MAX
                                                            : static_cast<size_t>(count));
    Array out;
    out.reserve(static_cast<size_t>(count));
    for (__int128 i = 0; i < count; ++i) {  // each value lies in [start, stop): fits in 64 bits
      out.push_back(Value::integer(static_cast<int64_t>(v[0] + i * v[2])));
    }
    return ctx_.array(std::move(out));
  }
  if (name == "namespace") {
    Object entries;
    if (args.positional.size() > 1) throw Error("namespace() takes at most 1 positional argument");
    if (!args.positional.empty()) {
      if (!args.positional[0].is(Value::Kind::object)) throw Error("namespace() takes a dict");
      entries = args.positional[0].as_object();
    }
    for (const auto& [k, v] : args.keyword) entries.emplace_back(k, v);
    return Value::make_namespace(std::move(entries));
  }
  if (name == "strftime_now") {
    args.check(name, 1, {});
    if (args.positional.empty() || !args.positional[0].is(Value::Kind::string)) {
      throw Error("strftime_now() takes a format string");
    }
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    localtime_r(&now, &tm);
    char buf[256];
    const size_t n = std::strftime(buf, sizeof buf, args.positional[0].as_string().c_str(), &tm);
    return Value::string(std::string(buf, n));
  }
  throw Error("unknown function '" + name + "'");
}

Value Interpreter::eval_binary(const Expr& e) {
  const std::string& op = e.name;
  if ((op == "+" || op == "~") && e.args[0]->kind == Expr::Kind::binary && e.args[0]->name == op) {
    return eval_concatenation(e);
  }
  const Value a = eval(*e.args[0]);
  if (op == "and") return a.truthy() ? eval(*e.args[1]) : a;
  if (op == "or") return a.truthy() ? a : eval(*e.args[1]);
  const Value b = eval(*e.args[1]);
  return binary_operator(ctx_, op, a, b);
}

// a + b + c + ... (or ~): the chain is left-deep, ((a + b) + c) + d. Once the
// left side is a string every further + appends (@huggingface/jinja's rule:
// a string and anything but none/undefined concatenate), so the text is built
// once instead of copied at every step: `ns.prompt + '<|' + role + '|>' + text`
// in a loop would otherwise copy the whole prompt four times per message.
Value Interpreter::eval_concatenation(const Expr& e) {
  const std::string& op = e.name;
  std::vector<const Expr*> operands;  // right operands, last first
  const Expr* left = &e;
  while (left->kind == Expr::Kind::binary && left->name == op) {
    operands.push_back(left->args[1].get());
    left = left->args[0].get();
  }
  Value acc = eval(*left);
  std::string text;
  bool building = false;  // acc's text is in `text`
  for (auto it = operands.rbegin(); it != operands.rend(); ++it) {
    ctx_.work();
    const Value b = eval(**it);
    const bool appends = op == "~" ? true
                                   : (building || acc.is(Value::Kind::string)) &&
                                         !b.is_undefined() && !b.is(Value::Kind::none);
    if (!appends) {
      if (building) acc = ctx_.string(std::move(text));
      building = false;
      acc = binary_operator(ctx_, op, acc, b);
      continue;
    }
    if (!building) {
      text = op == "~" ? stringify(ctx_, acc) : ctx_.text_of(acc);
      building = true;
    }
    const std::string piece = op == "~" ? stringify(ctx_, b) : ctx_.text_of(b);
    ctx_.check_string(text.size() + piece.size());
    text += piece;
  }
  return building ? ctx_.string(std::move(text)) : acc;
}

}  // namespace llama::chat
