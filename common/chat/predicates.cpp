// Jinja tests: `x is defined`, `x is not none`, `n is divisibleby 3`, and the
// test names selectattr / rejectattr take.
#include <cmath>

#include "context.hpp"

namespace llama::chat {
namespace {

const Value& one_argument(const std::string& name, std::span<const Value> args) {
  if (args.size() != 1) throw Error("test '" + name + "' takes one argument");
  return args[0];
}

bool no_arguments(const std::string& name, std::span<const Value> args) {
  if (!args.empty()) throw Error("test '" + name + "' takes no arguments");
  return true;
}

int64_t integer_operand(const std::string& name, const Value& v) {
  if (!v.is(Value::Kind::integer)) {
    throw Error("test '" + name + "' needs an integer, got a " + std::string(v.kind_name()));
  }
  return v.as_int();
}

bool is_lower(const std::string& s) {
  for (const char c : s) {
    if (c >= 'A' && c <= 'Z') return false;
  }
  return true;
}

bool is_upper(const std::string& s) {
  for (const char c : s) {
    if (c >= 'a' && c <= 'z') return false;
  }
  return true;
}

}  // namespace

bool apply_test(RenderContext& ctx, const std::string& name, const Value& v,
                std::span<const Value> args) {
  using K = Value::Kind;
  ctx.work();
  if (name == "eq" || name == "equalto" || name == "==") {
    return ctx.equal(v, one_argument(name, args));
  }
  if (name == "ne" || name == "!=") return !ctx.equal(v, one_argument(name, args));
  if (name == "divisibleby") {
    const int64_t d = integer_operand(name, one_argument(name, args));
    if (d == 0) throw Error("divisibleby 0");
    return d == -1 || integer_operand(name, v) % d == 0;
  }
  if (name == "in") {
    const Value& seq = one_argument(name, args);
    if (seq.is(K::array)) {
      for (const Value& x : seq.as_array()) {
        if (ctx.equal(v, x)) return true;
      }
      return false;
    }
    if (seq.is(K::string) && v.is(K::string)) {
      ctx.scan(seq.as_string().size() * (1 + v.as_string().size() / 64));
      return seq.as_string().find(v.as_string()) != std::string::npos;
    }
    if (seq.is_mapping()) return v.is(K::string) && ctx.find(seq, v.as_string()) != nullptr;
    throw Error("test 'in' needs a list, string or dict");
  }
  no_arguments(name, args);
  if (name == "defined") return !v.is_undefined();
  if (name == "undefined") return v.is_undefined();
  if (name == "none") return v.is(K::none);
  if (name == "string") return v.is(K::string);
  if (name == "number") return v.is_number();
  if (name == "integer") return v.is(K::integer);
  if (name == "float") return v.is(K::floating);
  if (name == "boolean") return v.is(K::boolean);
  if (name == "true") return v.is(K::boolean) && v.as_bool();
  if (name == "false") return v.is(K::boolean) && !v.as_bool();
  if (name == "mapping") return v.is(K::object);
  if (name == "iterable") return v.is(K::array) || v.is(K::string) || v.is_mapping();
  if (name == "sequence") return v.is(K::array) || v.is(K::string) || v.is(K::object);
  if (name == "callable") return v.is(K::callable);
  if (name == "odd") return integer_operand(name, v) % 2 != 0;
  if (name == "even") return integer_operand(name, v) % 2 == 0;
  if (name == "lower" || name == "upper") {
    if (!v.is(K::string)) return false;
    ctx.scan(v.as_string().size());
    return name == "lower" ? is_lower(v.as_string()) : is_upper(v.as_string());
  }
  throw Error("unknown test '" + name + "'");
}

}  // namespace llama::chat
