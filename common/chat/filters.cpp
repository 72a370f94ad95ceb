// Jinja filters: `value | name(args)`. trim, length/count, upper, lower,
// title, capitalize, default/d, tojson, list, selectattr, rejectattr, map,
// join, first, last, string, int, float, abs, items, reverse, replace, indent, safe.
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "context.hpp"
#include "text.hpp"

namespace llama::chat {
namespace {

// An attribute of `item` by a dotted path ("function.name", "0"), or undefined.
Value attribute(const Value& item, const std::string& path) {
  Value v = item;
  size_t at = 0;
  while (true) {
    const size_t dot = path.find('.', at);
    const std::string part =
        path.substr(at, dot == std::string::npos ? std::string::npos : dot - at);
    if (const Value* found = v.find(part)) {
      v = *found;
    } else if (v.is(Value::Kind::array)) {
      int64_t i = -1;
      const auto r = std::from_chars(part.data(), part.data() + part.size(), i);
      if (r.ec != std::errc() || r.ptr != part.data() + part.size() || i < 0 ||
          static_cast<size_t>(i) >= v.as_array().size()) {
        return Value();
      }
      v = v.as_array()[static_cast<size_t>(i)];
    } else {
      return Value();
    }
    if (dot == std::string::npos) return v;
    at = dot + 1;
  }
}

const std::string& string_operand(const std::string& filter, const Value& v) {
  if (!v.is(Value::Kind::string)) {
    throw Error("filter '" + filter + "' needs a string, got a " + std::string(v.kind_name()));
  }
  return v.as_string();
}

// A list, a string's characters or a dict's keys: what `list` and for loops see.
Array as_items(const std::string& filter, const Value& v) {
  switch (v.kind()) {
    case Value::Kind::array:
      return v.as_array();
    case Value::Kind::string: {
      Array out;
      const std::string& s = v.as_string();
      const std::vector<size_t> cps = text::code_point_offsets(s);
      for (size_t i = 0; i + 1 < cps.size(); ++i) {
        out.push_back(Value::string(s.substr(cps[i], cps[i + 1] - cps[i])));
      }
      return out;
    }
    case Value::Kind::object:
    case Value::Kind::ns: {
      Array out;
      for (const auto& [k, x] : v.as_object()) out.push_back(Value::string(k));
      return out;
    }
    case Value::Kind::undefined:
      return {};
    default:
      throw Error("filter '" + filter + "' needs a list, got a " + std::string(v.kind_name()));
  }
}

int64_t length(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::string:
      return static_cast<int64_t>(text::code_point_offsets(v.as_string()).size() - 1);
    case Value::Kind::array:
      return static_cast<int64_t>(v.as_array().size());
    case Value::Kind::object:
    case Value::Kind::ns:
      return static_cast<int64_t>(v.as_object().size());
    case Value::Kind::undefined:
      return 0;
    default:
      throw Error(std::string("a ") + v.kind_name() + " has no length");
  }
}

Value select_by_attribute(RenderContext& ctx, const std::string& name, const Value& operand,
                          const Arguments& args) {
  if (args.positional.empty() || !args.positional[0].is(Value::Kind::string)) {
    throw Error("filter '" + name + "' needs an attribute name");
  }
  const std::string& attr = args.positional[0].as_string();
  const bool select = name == "selectattr";
  std::string test;
  if (args.positional.size() > 1) test = string_operand(name, args.positional[1]);
  const auto test_args =
      args.positional.size() > 2 ? args.positional.subspan(2) : std::span<const Value>{};
  Array out;
  for (const Value& item : as_items(name, operand)) {
    ctx.work();
    const Value a = attribute(item, attr);
    const bool pass = test.empty() ? a.truthy() : apply_test(test, a, test_args);
    if (pass == select) out.push_back(item);
  }
  return ctx.array(std::move(out));
}

Value map_filter(RenderContext& ctx, const Value& operand, const Arguments& args) {
  args.check("map", 1, {"attribute", "default"});
  const Value* attr = args.get(99, "attribute");
  const Value* dflt = args.get(99, "default");
  Array out;
  if (attr != nullptr) {
    const std::string& path = string_operand("map", *attr);
    for (const Value& item : as_items("map", operand)) {
      ctx.work();
      Value v = attribute(item, path);
      out.push_back(v.is_undefined() && dflt ? *dflt : std::move(v));
    }
  } else {
    if (args.positional.empty()) throw Error("filter 'map' needs a filter name or attribute=");
    const std::string& filter = string_operand("map", args.positional[0]);
    const Kwargs none;
    for (const Value& item : as_items("map", operand)) {
      ctx.work();
      out.push_back(apply_filter(ctx, filter, item, Arguments{{}, none}));
    }
  }
  return ctx.array(std::move(out));
}

Value tojson(const Value& operand, const Arguments& args) {
  args.check("tojson", 1, {"indent", "ensure_ascii", "sort_keys", "separators"});
  const Value* indent = args.get(0, "indent");
  int n = 0;
  if (indent != nullptr && !indent->is(Value::Kind::none)) {
    if (!indent->is(Value::Kind::integer) || indent->as_int() < 0 || indent->as_int() > 64) {
      throw Error("tojson(): indent must be an integer in [0, 64]");
    }
    n = static_cast<int>(indent->as_int());
  }
  return Value::string(to_json(operand, n));
}

}  // namespace

std::string stringify(const Value& v) {
  if (v.is(Value::Kind::none)) return "None";  // Python's str(None)
  return to_output(v);
}

Value apply_filter(RenderContext& ctx, const std::string& name, const Value& operand,
                   const Arguments& args) {
  ctx.work();
  if (name == "default" || name == "d") {
    args.check(name, 2, {"default_value", "boolean"});
    const Value* fallback = args.get(0, "default_value");
    const Value* boolean = args.get(1, "boolean");
    const bool use = operand.is_undefined() || (boolean && boolean->truthy() && !operand.truthy());
    return use ? (fallback ? *fallback : Value::string("")) : operand;
  }
  if (name == "tojson") return ctx.string(tojson(operand, args).as_string());
  if (name == "selectattr" || name == "rejectattr")
    return select_by_attribute(ctx, name, operand, args);
  if (name == "map") return map_filter(ctx, operand, args);
  if (name == "safe") return operand;
  if (name == "length" || name == "count") {
    args.check(name, 0, {});
    return Value::integer(length(operand));
  }
  if (name == "list") {
    args.check(name, 0, {});
    return ctx.array(as_items(name, operand));
  }
  if (name == "first" || name == "last") {
    args.check(name, 0, {});
    const Array items = as_items(name, operand);
    if (items.empty()) return Value();
    return name == "first" ? items.front() : items.back();
  }
  if (name == "reverse") {
    args.check(name, 0, {});
    if (operand.is(Value::Kind::string)) {
      Array cps = as_items(name, operand);
      std::string out;
      for (auto it = cps.rbegin(); it != cps.rend(); ++it) out += it->as_string();
      return ctx.string(std::move(out));
    }
    Array items = as_items(name, operand);
    return ctx.array(Array(items.rbegin(), items.rend()));
  }
  if (name == "join") {
    args.check(name, 2, {"d", "attribute"});
    const Value* sep = args.get(0, "d");
    const Value* attr = args.get(1, "attribute");
    const std::string d = sep ? string_operand(name, *sep) : "";
    std::string out;
    bool first = true;
    for (const Value& item : as_items(name, operand)) {
      if (!first) out += d;
      first = false;
      out += stringify(attr ? attribute(item, string_operand(name, *attr)) : item);
      ctx.check_size(out.size(), "a string");
    }
    return ctx.string(std::move(out));
  }
  if (name == "items") {
    args.check(name, 0, {});
    if (operand.is_undefined()) return Value::array({});
    if (!operand.is_mapping()) throw Error("filter 'items' needs a dict");
    Array out;
    for (const auto& [k, v] : operand.as_object())
      out.push_back(Value::array({Value::string(k), v}));
    return ctx.array(std::move(out));
  }
  if (name == "string") {
    args.check(name, 0, {});
    return ctx.string(stringify(operand));
  }
  if (name == "int" || name == "float") {
    args.check(name, 1, {"default"});
    const Value* dflt = args.get(0, "default");
    const Value fallback = dflt ? *dflt : (name == "int" ? Value::integer(0) : Value::floating(0));
    if (operand.is(Value::Kind::boolean)) return Value::integer(operand.as_bool() ? 1 : 0);
    if (operand.is_number()) {
      if (name == "float") return Value::floating(operand.as_double());
      const double d = operand.as_double();
      if (operand.is(Value::Kind::integer)) return operand;
      if (!std::isfinite(d) || std::fabs(d) >= 9.2e18) return fallback;
      return Value::integer(static_cast<int64_t>(d));  // toward zero, as Python's int()
    }
    if (!operand.is(Value::Kind::string)) return fallback;
    const std::string s(text::trim(operand.as_string()));
    if (name == "int") {
      int64_t i = 0;
      const auto r = std::from_chars(s.data(), s.data() + s.size(), i);
      return (r.ec == std::errc() && r.ptr == s.data() + s.size() && !s.empty()) ? Value::integer(i)
                                                                                 : fallback;
    }
    char* end = nullptr;
    const double d = std::strtod(s.c_str(), &end);
    return (!s.empty() && end == s.c_str() + s.size()) ? Value::floating(d) : fallback;
  }
  if (name == "abs") {
    args.check(name, 0, {});
    if (operand.is(Value::Kind::integer)) {
      if (operand.as_int() == INT64_MIN) throw Error("integer overflow in abs");
      return Value::integer(operand.as_int() < 0 ? -operand.as_int() : operand.as_int());
    }
    if (operand.is(Value::Kind::floating)) return Value::floating(std::fabs(operand.as_double()));
    throw Error("filter 'abs' needs a number");
  }
  // The string filters.
  if (name == "trim") {
    args.check(name, 1, {"chars"});
    const std::string& s = string_operand(name, operand);
    const Value* chars = args.get(0, "chars");
    if (chars && !chars->is(Value::Kind::none)) {
      return ctx.string(
          std::string(text::strip_chars(s, string_operand(name, *chars), true, true)));
    }
    return ctx.string(std::string(text::trim(s)));
  }
  if (name == "upper" || name == "lower" || name == "title" || name == "capitalize") {
    args.check(name, 0, {});
    const std::string& s = string_operand(name, operand);
    if (name == "upper") return ctx.string(text::to_upper(s));
    if (name == "lower") return ctx.string(text::to_lower(s));
    if (name == "title") return ctx.string(text::title(s));
    return ctx.string(text::capitalize(s));
  }
  if (name == "indent") {  // Python's indent(width=4, first=False, blank=False)
    args.check(name, 3, {"width", "first", "blank"});
    const std::string& s = string_operand(name, operand);
    const Value* width = args.get(0, "width");
    const Value* first = args.get(1, "first");
    const Value* blank = args.get(2, "blank");
    std::string pad;
    if (width && width->is(Value::Kind::string)) {
      pad = width->as_string();
    } else if (width) {
      if (!width->is(Value::Kind::integer) || width->as_int() < 0 || width->as_int() > 256) {
        throw Error("indent(): width must be an integer in [0, 256] or a string");
      }
      pad.assign(static_cast<size_t>(width->as_int()), ' ');
    } else {
      pad = "    ";
    }
    std::string out;
    size_t at = 0;
    bool first_line = true;
    while (true) {
      const size_t nl = s.find('\n', at);
      const std::string_view line =
          std::string_view(s).substr(at, nl == std::string::npos ? std::string::npos : nl - at);
      const bool indent = (!first_line || (first && first->truthy())) &&
                          (!line.empty() || (blank && blank->truthy()));
      if (indent) out += pad;
      out += line;
      ctx.check_size(out.size(), "a string");
      if (nl == std::string::npos) break;
      out += '\n';
      at = nl + 1;
      first_line = false;
    }
    return ctx.string(std::move(out));
  }
  if (name == "replace") {
    return call_method(ctx, Value::string(string_operand(name, operand)), "replace", args);
  }
  throw Error("unknown filter '" + name + "'");
}

}  // namespace llama::chat
