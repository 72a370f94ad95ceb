// Value: construction with depth and namespace bookkeeping, truthiness,
// equality, and the two ways a value becomes text (printed and JSON).
#include "llama/chat/value.hpp"

#include <charconv>
#include <cmath>

#include "llama/error.hpp"

namespace llama::chat {
namespace {

// Depth of a container holding `items`, refusing nesting beyond kMaxDepth.
template <typename Range, typename Get>
int container_depth(const Range& items, Get get, bool& holds_ns) {
  int deepest = 0;
  for (const auto& item : items) {
    const Value& v = get(item);
    deepest = std::max(deepest, v.depth());
    holds_ns = holds_ns || v.holds_namespace();
  }
  if (deepest + 1 > Value::kMaxDepth) {
    throw Error("values nested deeper than " + std::to_string(Value::kMaxDepth) + " levels");
  }
  return deepest + 1;
}

void append_json_string(std::string& out, std::string_view s) {
  out += '"';
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        if (c < 0x20) {
          out += "\\u00";
          out += "0123456789abcdef"[c >> 4];
          out += "0123456789abcdef"[c & 15];
        } else {
          out += ch;
        }
    }
  }
  out += '"';
}

// JavaScript's Number#toString for finite doubles: the shortest round-trip
// digits, as JSON.stringify writes numbers.
std::string shortest(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d < 0 ? "-Infinity" : "Infinity";
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, d);
  return std::string(buf, r.ptr);
}

void write_json(std::string& out, const Value& v, int indent, int level) {
  const auto newline = [&](int lvl) {
    out += '\n';
    out.append(static_cast<size_t>(indent * lvl), ' ');
  };
  switch (v.kind()) {
    case Value::Kind::undefined:
    case Value::Kind::none:
      out += "null";
      return;
    case Value::Kind::boolean:
      out += v.as_bool() ? "true" : "false";
      return;
    case Value::Kind::integer:
      out += std::to_string(v.as_int());
      return;
    case Value::Kind::floating:
      // JSON has no NaN or infinity; JSON.stringify writes null.
      out += std::isfinite(v.as_double()) ? shortest(v.as_double()) : "null";
      return;
    case Value::Kind::string:
      append_json_string(out, v.as_string());
      return;
    case Value::Kind::callable:
      throw Error("cannot convert a function to JSON");
    case Value::Kind::array: {
      const Array& a = v.as_array();
      out += '[';
      for (size_t i = 0; i < a.size(); ++i) {
        if (i > 0) out += indent > 0 ? "," : ", ";
        if (indent > 0) newline(level + 1);
        write_json(out, a[i], indent, level + 1);
      }
      if (indent > 0 && !a.empty()) newline(level);
      out += ']';
      return;
    }
    case Value::Kind::object:
    case Value::Kind::ns: {
      const Object& o = v.as_object();
      out += '{';
      for (size_t i = 0; i < o.size(); ++i) {
        if (i > 0) out += indent > 0 ? "," : ", ";
        if (indent > 0) newline(level + 1);
        append_json_string(out, o[i].first);
        out += ": ";
        write_json(out, o[i].second, indent, level + 1);
      }
      if (indent > 0 && !o.empty()) newline(level);
      out += '}';
      return;
    }
  }
}

}  // namespace

Value Value::none() {
  Value v;
  v.kind_ = Kind::none;
  return v;
}

Value Value::boolean(bool b) {
  Value v;
  v.kind_ = Kind::boolean;
  v.b_ = b;
  return v;
}

Value Value::integer(int64_t i) {
  Value v;
  v.kind_ = Kind::integer;
  v.i_ = i;
  return v;
}

Value Value::floating(double d) {
  Value v;
  v.kind_ = Kind::floating;
  v.d_ = d;
  return v;
}

Value Value::string(std::string s) {
  Value v;
  v.kind_ = Kind::string;
  v.s_ = std::move(s);
  return v;
}

Value Value::array(Array items) {
  Value v;
  v.kind_ = Kind::array;
  v.depth_ = container_depth(
      items, [](const Value& x) -> const Value& { return x; }, v.holds_ns_);
  v.array_ = std::make_shared<const Array>(std::move(items));
  return v;
}

Value Value::object(Object entries) {
  Value v;
  v.kind_ = Kind::object;
  v.depth_ = container_depth(
      entries, [](const auto& e) -> const Value& { return e.second; }, v.holds_ns_);
  v.object_ = std::make_shared<Object>(std::move(entries));
  return v;
}

Value Value::make_namespace(Object entries) {
  for (const auto& [key, value] : entries) {
    if (value.holds_namespace()) throw Error("a namespace cannot hold a namespace");
  }
  Value v = object(std::move(entries));
  v.kind_ = Kind::ns;
  v.holds_ns_ = true;
  return v;
}

Value Value::callable(std::string name) { return callable(std::move(name), Value()); }

Value Value::macro(std::string name, const void* definition) {
  Value v;
  v.kind_ = Kind::callable;
  v.callable_ = std::make_shared<const Callable>(Callable{std::move(name), Value(), definition});
  return v;
}

Value Value::callable(std::string name, Value self) {
  Value v;
  v.kind_ = Kind::callable;
  v.callable_ = std::make_shared<const Callable>(Callable{std::move(name), std::move(self)});
  return v;
}

const Array& Value::as_array() const {
  static const Array empty;
  return array_ ? *array_ : empty;
}

const Object& Value::as_object() const {
  static const Object empty;
  return object_ ? *object_ : empty;
}

Object& Value::namespace_entries() const {
  if (kind_ != Kind::ns || !object_) throw Error("only a namespace's attributes can be set");
  return *object_;
}

const Callable& Value::as_callable() const { return *callable_; }

const Value* Value::find(std::string_view key) const {
  if (!is_mapping()) return nullptr;
  for (const auto& [k, v] : as_object()) {
    if (k == key) return &v;
  }
  return nullptr;
}

bool Value::truthy() const {
  switch (kind_) {
    case Kind::undefined:
    case Kind::none:
      return false;
    case Kind::boolean:
      return b_;
    case Kind::integer:
      return i_ != 0;
    case Kind::floating:
      return d_ != 0.0;
    case Kind::string:
      return !s_.empty();
    case Kind::array:
      return !as_array().empty();
    case Kind::object:
      return !as_object().empty();
    case Kind::ns:
    case Kind::callable:
      return true;
  }
  return false;
}

const char* Value::kind_name(Kind k) {
  switch (k) {
    case Kind::undefined:
      return "undefined";
    case Kind::none:
      return "none";
    case Kind::boolean:
      return "boolean";
    case Kind::integer:
      return "integer";
    case Kind::floating:
      return "float";
    case Kind::string:
      return "string";
    case Kind::array:
      return "list";
    case Kind::object:
      return "dict";
    case Kind::ns:
      return "namespace";
    case Kind::callable:
      return "function";
  }
  return "?";
}

bool equal(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is(Value::Kind::integer) && b.is(Value::Kind::integer)) return a.as_int() == b.as_int();
    return a.as_double() == b.as_double();
  }
  // Python: True == 1; JavaScript's == too.
  if (a.is(Value::Kind::boolean) && b.is_number()) return equal(Value::integer(a.as_bool()), b);
  if (b.is(Value::Kind::boolean) && a.is_number()) return equal(a, Value::integer(b.as_bool()));
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Value::Kind::undefined:
    case Value::Kind::none:
      return true;
    case Value::Kind::boolean:
      return a.as_bool() == b.as_bool();
    case Value::Kind::string:
      return a.as_string() == b.as_string();
    case Value::Kind::array: {
      const Array &x = a.as_array(), &y = b.as_array();
      if (x.size() != y.size()) return false;
      for (size_t i = 0; i < x.size(); ++i) {
        if (!equal(x[i], y[i])) return false;
      }
      return true;
    }
    case Value::Kind::object: {
      const Object &x = a.as_object(), &y = b.as_object();
      if (x.size() != y.size()) return false;
      for (const auto& [key, value] : x) {
        const Value* other = b.find(key);
        if (other == nullptr || !equal(value, *other)) return false;
      }
      return true;
    }
    case Value::Kind::ns:
      return &a.as_object() == &b.as_object();  // identity, as Python
    case Value::Kind::callable:
      return a.as_callable().name == b.as_callable().name &&
             a.as_callable().macro == b.as_callable().macro &&
             equal(a.as_callable().self, b.as_callable().self);
    default:
      return false;
  }
}

std::string to_output(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::undefined:
    case Value::Kind::none:
      return "";
    case Value::Kind::boolean:
      return v.as_bool() ? "true" : "false";
    case Value::Kind::integer:
      return std::to_string(v.as_int());
    case Value::Kind::floating: {
      const double d = v.as_double();
      if (d == 0.0 && std::signbit(d)) return "-0.0";
      if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 1e21) {
        char buf[64];
        const int n = std::snprintf(buf, sizeof buf, "%.1f", d);
        return std::string(buf, static_cast<size_t>(n));
      }
      return shortest(d);
    }
    case Value::Kind::string:
      return v.as_string();
    case Value::Kind::callable:
      return "<function " + v.as_callable().name + ">";
    default:
      return to_json(v);
  }
}

std::string to_json(const Value& v, int indent) {
  std::string out;
  write_json(out, v, indent, 0);
  return out;
}

}  // namespace llama::chat
