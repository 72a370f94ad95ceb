// Binary and unary operators. Integers stay integers where Python keeps them
// (+ - * // % and ** with a non-negative exponent) and overflow is an error;
// / always gives a float; // and % follow Python's floor semantics.
#include "operators.hpp"

#include <algorithm>
#include <cmath>

namespace llama::chat {
namespace {

bool is_numeric(const Value& v) { return v.is_number() || v.is(Value::Kind::boolean); }

Value as_number(const Value& v) {
  return v.is(Value::Kind::boolean) ? Value::integer(v.as_bool() ? 1 : 0) : v;
}

[[noreturn]] void unsupported(const std::string& op, const Value& a, const Value& b) {
  throw Error("operator '" + op + "' does not apply to a " + a.kind_name() + " and a " +
              b.kind_name());
}

[[noreturn]] void overflow(const std::string& op) {
  throw Error("integer overflow in '" + op + "'");
}

Value arithmetic(const std::string& op, const Value& x, const Value& y) {
  const Value a = as_number(x), b = as_number(y);
  const bool ints = a.is(Value::Kind::integer) && b.is(Value::Kind::integer);
  if (ints) {
    const int64_t p = a.as_int(), q = b.as_int();
    int64_t r = 0;
    if (op == "+") {
      if (__builtin_add_overflow(p, q, &r)) overflow(op);
      return Value::integer(r);
    }
    if (op == "-") {
      if (__builtin_sub_overflow(p, q, &r)) overflow(op);
      return Value::integer(r);
    }
    if (op == "*") {
      if (__builtin_mul_overflow(p, q, &r)) overflow(op);
      return Value::integer(r);
    }
    if (op == "//" || op == "%") {
      if (q == 0) throw Error("integer division or modulo by zero");
      if (q == -1) {  // p / -1 overflows for INT64_MIN; p % -1 is always 0
        if (op == "%") return Value::integer(0);
        if (p == INT64_MIN) overflow(op);
      }
      int64_t quot = p / q, rem = p % q;
      if (rem != 0 && ((rem < 0) != (q < 0))) {  // floor, as Python
        --quot;
        rem += q;
      }
      return Value::integer(op == "//" ? quot : rem);
    }
    if (op == "**" && q >= 0) {
      int64_t result = 1;
      for (int64_t i = 0; i < q; ++i) {
        if (__builtin_mul_overflow(result, p, &result)) overflow(op);
        if (result == 0 || result == 1) break;  // 0**n, 1**n
        if (result == -1) {                     // (-1)**n
          result = (q % 2 == 0) ? 1 : -1;
          break;
        }
      }
      return Value::integer(result);
    }
  }
  const double p = a.as_double(), q = b.as_double();
  if (op == "+") return Value::floating(p + q);
  if (op == "-") return Value::floating(p - q);
  if (op == "*") return Value::floating(p * q);
  if (op == "/") {
    if (q == 0) throw Error("division by zero");
    return Value::floating(p / q);
  }
  if (op == "//" || op == "%") {
    if (q == 0) throw Error("float division or modulo by zero");
    const double quot = std::floor(p / q);
    return Value::floating(op == "//" ? quot : p - quot * q);
  }
  if (op == "**") {
    if (p == 0 && q < 0) throw Error("0.0 cannot be raised to a negative power");
    return Value::floating(std::pow(p, q));
  }
  unsupported(op, x, y);
}

int compare(RenderContext& ctx, const std::string& op, const Value& a, const Value& b) {
  if (is_numeric(a) && is_numeric(b)) {
    const Value x = as_number(a), y = as_number(b);
    if (x.is(Value::Kind::integer) && y.is(Value::Kind::integer)) {
      return x.as_int() < y.as_int() ? -1 : x.as_int() > y.as_int() ? 1 : 0;
    }
    const double p = x.as_double(), q = y.as_double();
    if (std::isnan(p) || std::isnan(q)) return 2;  // every ordering is false
    return p < q ? -1 : p > q ? 1 : 0;
  }
  if (a.is(Value::Kind::string) && b.is(Value::Kind::string)) {
    ctx.scan(std::min(a.as_string().size(), b.as_string().size()));
    const int c = a.as_string().compare(b.as_string());  // bytes: code point order in UTF-8
    return c < 0 ? -1 : c > 0 ? 1 : 0;
  }
  unsupported(op, a, b);
}

// Each element compared and each byte searched is work: `x in big_list` in a
// loop is the loop's length times the list's.
bool contains(RenderContext& ctx, const std::string& op, const Value& needle,
              const Value& haystack) {
  switch (haystack.kind()) {
    case Value::Kind::array:
      for (const Value& item : haystack.as_array()) {
        if (ctx.equal(needle, item)) return true;
      }
      return false;
    case Value::Kind::string:
      if (!needle.is(Value::Kind::string)) unsupported(op, needle, haystack);
      // std::string::find is O(haystack x needle) at worst.
      ctx.work(1 + haystack.as_string().size() / 64 * (1 + needle.as_string().size() / 64));
      return haystack.as_string().find(needle.as_string()) != std::string::npos;
    case Value::Kind::object:
    case Value::Kind::ns:
      return needle.is(Value::Kind::string) && ctx.find(haystack, needle.as_string()) != nullptr;
    case Value::Kind::undefined:
      return false;
    default:
      unsupported(op, needle, haystack);
  }
}

}  // namespace

Value unary_minus_plus(const std::string& op, const Value& v) {
  if (!is_numeric(v)) throw Error("unary '" + op + "' does not apply to a " + v.kind_name());
  const Value n = as_number(v);
  if (op == "+") return n;
  if (n.is(Value::Kind::integer)) {
    if (n.as_int() == INT64_MIN) overflow("-");
    return Value::integer(-n.as_int());
  }
  return Value::floating(-n.as_double());
}

Value binary_operator(RenderContext& ctx, const std::string& op, const Value& a, const Value& b) {
  if (op == "==") return Value::boolean(ctx.equal(a, b));
  if (op == "!=") return Value::boolean(!ctx.equal(a, b));
  if (op == "in") return Value::boolean(contains(ctx, op, a, b));
  if (op == "not in") return Value::boolean(!contains(ctx, op, a, b));
  if (op == "~") {
    const std::string x = stringify(ctx, a), y = stringify(ctx, b);
    ctx.check_string(x.size() + y.size());
    return ctx.string(x + y);
  }
  if (op == "<" || op == ">" || op == "<=" || op == ">=") {
    const int c = compare(ctx, op, a, b);
    if (c == 2) return Value::boolean(false);
    if (op == "<") return Value::boolean(c < 0);
    if (op == ">") return Value::boolean(c > 0);
    if (op == "<=") return Value::boolean(c <= 0);
    return Value::boolean(c >= 0);
  }
  if (op == "+") {
    if (a.is(Value::Kind::array) && b.is(Value::Kind::array)) {
      ctx.check_list(a.as_array().size() + b.as_array().size());  // before copying either
      Array items;
      items.reserve(a.as_array().size() + b.as_array().size());
      items.insert(items.end(), a.as_array().begin(), a.as_array().end());
      items.insert(items.end(), b.as_array().begin(), b.as_array().end());
      return ctx.array(std::move(items));
    }
    // A string and anything printable concatenate (@huggingface/jinja).
    if ((a.is(Value::Kind::string) || b.is(Value::Kind::string)) && !a.is_undefined() &&
        !b.is_undefined() && !a.is(Value::Kind::none) && !b.is(Value::Kind::none)) {
      const std::string x = ctx.text_of(a), y = ctx.text_of(b);
      ctx.check_string(x.size() + y.size());
      return ctx.string(x + y);
    }
  }
  if (is_numeric(a) && is_numeric(b)) return arithmetic(op, a, b);
  unsupported(op, a, b);
}

}  // namespace llama::chat
