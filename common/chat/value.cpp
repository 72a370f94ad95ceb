// Value: construction with depth, weight and namespace bookkeeping,
// truthiness, equality, and the two ways a value becomes text (printed and JSON).
#include "llama/chat/value.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string_view>
#include <unordered_map>

#include "llama/error.hpp"

namespace llama::chat {
namespace {

uint64_t add_weight(uint64_t a, uint64_t b) { return std::min(a + b, Value::kMaxWeight); }
uint64_t string_weight(size_t bytes) { return 1 + bytes / 64; }

// Depth and weight of a container holding `items`, refusing nesting beyond kMaxDepth.
template <typename Range, typename Get, typename KeyBytes>
int container_depth(const Range& items, Get get, KeyBytes key_bytes, bool& holds_ns,
                    uint64_t& weight) {
  int deepest = 0;
  weight = 1;
  for (const auto& item : items) {
    const Value& v = get(item);
    deepest = std::max(deepest, v.depth());
    holds_ns = holds_ns || v.holds_namespace();
    weight = add_weight(weight, add_weight(v.weight(), key_bytes(item) / 64));
  }
  if (deepest + 1 > Value::kMaxDepth) {
    throw Error("values nested deeper than " + std::to_string(Value::kMaxDepth) + " levels");
  }
  return deepest + 1;
}

[[noreturn]] void too_long(size_t max_bytes) {
  throw Error("a text grew past the limit of " + std::to_string(max_bytes) + " bytes");
}

size_t json_string_length(std::string_view s) {
  size_t n = 2;
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    n += c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t' || c == '\b' || c == '\f' ? 2
         : c < 0x20                                                                             ? 6
                                                                                                : 1;
  }
  return n;
}

void append_json_string(std::string& out, std::string_view s, size_t max_bytes) {
  if (out.size() + s.size() > max_bytes || out.size() + json_string_length(s) > max_bytes) {
    too_long(max_bytes);
  }
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

void write_json(std::string& out, const Value& v, int indent, int level, size_t max_bytes) {
  if (out.size() > max_bytes) too_long(max_bytes);
  const auto newline = [&](int lvl) {
    const auto spaces = static_cast<size_t>(indent) * static_cast<size_t>(lvl);
    if (out.size() + 1 + spaces > max_bytes) too_long(max_bytes);
    out += '\n';
    out.append(spaces, ' ');
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
      append_json_string(out, v.as_string(), max_bytes);
      return;
    case Value::Kind::callable:
      throw Error("cannot convert a function to JSON");
    case Value::Kind::array: {
      const Array& a = v.as_array();
      out += '[';
      for (size_t i = 0; i < a.size(); ++i) {
        if (i > 0) out += indent > 0 ? "," : ", ";
        if (indent > 0) newline(level + 1);
        write_json(out, a[i], indent, level + 1, max_bytes);
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
        append_json_string(out, o[i].first, max_bytes);
        out += ": ";
        write_json(out, o[i].second, indent, level + 1, max_bytes);
      }
      if (indent > 0 && !o.empty()) newline(level);
      out += '}';
      return;
    }
  }
}

// Dicts with the same keys and equal values, in any order: in one pass when
// the keys come in the same order (as two reads of one JSON text do), else
// through a hash of one side's keys, never a scan per key.
bool equal_objects(const Object& x, const Object& y) {
  if (x.size() != y.size()) return false;
  size_t i = 0;
  for (; i < x.size() && x[i].first == y[i].first; ++i) {
    if (!equal(x[i].second, y[i].second)) return false;
  }
  if (i == x.size()) return true;
  std::unordered_map<std::string_view, const Value*> other;
  for (size_t j = i; j < y.size(); ++j) other.emplace(y[j].first, &y[j].second);
  for (size_t j = i; j < x.size(); ++j) {
    const auto it = other.find(x[j].first);
    if (it == other.end() || !equal(x[j].second, *it->second)) return false;
  }
  return true;
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
  v.weight_ = string_weight(s.size());
  if (!s.empty()) v.s_ = std::make_shared<const std::string>(std::move(s));
  return v;
}

Value Value::array(Array items) {
  Value v;
  v.kind_ = Kind::array;
  v.depth_ = container_depth(
      items, [](const Value& x) -> const Value& { return x; },
      [](const Value&) { return size_t{0}; }, v.holds_ns_, v.weight_);
  v.array_ = std::make_shared<const Array>(std::move(items));
  return v;
}

Value Value::object(Object entries) {
  Value v;
  v.kind_ = Kind::object;
  v.depth_ = container_depth(
      entries, [](const auto& e) -> const Value& { return e.second; },
      [](const auto& e) { return e.first.size(); }, v.holds_ns_, v.weight_);
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

const std::string& Value::as_string() const {
  static const std::string empty;
  return s_ ? *s_ : empty;
}

uint64_t Value::weight() const {
  if (kind_ != Kind::ns || !object_) return weight_;
  // A namespace changes after it is made: its entries as they are now.
  uint64_t w = 1;
  for (const auto& [k, v] : *object_) w = add_weight(w, add_weight(v.weight(), k.size() / 64));
  return w;
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
      return s_ != nullptr;
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
      if (&x == &y) return true;  // one list: its items are themselves, as Python's identity check
      if (x.size() != y.size()) return false;
      for (size_t i = 0; i < x.size(); ++i) {
        if (!equal(x[i], y[i])) return false;
      }
      return true;
    }
    case Value::Kind::object:
      return &a.as_object() == &b.as_object() || equal_objects(a.as_object(), b.as_object());
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

std::string to_output(const Value& v, size_t max_bytes) {
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
      return to_json(v, 0, max_bytes);
  }
}

std::string to_json(const Value& v, int indent, size_t max_bytes) {
  std::string out;
  write_json(out, v, indent, 0, max_bytes);
  return out;
}

}  // namespace llama::chat
