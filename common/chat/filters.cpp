// Jinja filters: `value | name(args)`. trim, length/count, upper, lower,
// title, capitalize, default/d, tojson, list, selectattr, rejectattr, map,
// join, first, last, string, int, float, abs, items, reverse, replace, indent, safe.
// Each charges the render's budgets (RenderContext) for what it visits and builds.
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "context.hpp"
#include "text.hpp"

namespace llama::chat {
namespace {

// An attribute of `item` by a dotted path ("function.name", "0"), or undefined.
Value attribute(RenderContext& ctx, const Value& item, const std::string& path) {
  Value v = item;
  size_t at = 0;
  while (true) {
    const size_t dot = path.find('.', at);
    const std::string part =
        path.substr(at, dot == std::string::npos ? std::string::npos : dot - at);
    if (const Value* found = ctx.find(v, part)) {
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

// A list, a string's characters or a dict's keys, as a list value.
Value as_items(RenderContext& ctx, const std::string& filter, const Value& v) {
  if (!v.is(Value::Kind::array) && !v.is(Value::Kind::string) && !v.is_mapping() &&
      !v.is_undefined()) {
    throw Error("filter '" + filter + "' needs a list, got a " + std::string(v.kind_name()));
  }
  return iteration_items(ctx, v);
}

int64_t length(RenderContext& ctx, const Value& v) {
  switch (v.kind()) {
    case Value::Kind::string:
      ctx.scan(v.as_string().size());
      return static_cast<int64_t>(text::code_point_count(v.as_string()));
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

// The first or last item without building the list of all of them.
Value first_or_last(RenderContext& ctx, const std::string& name, const Value& v) {
  const bool first = name == "first";
  if (v.is(Value::Kind::string)) {
    const std::string& s = v.as_string();
    if (s.empty()) return Value();
    const size_t n =
        first ? text::code_point_length(s, 0) : text::code_point_length_before(s, s.size());
    return Value::string(s.substr(first ? 0 : s.size() - n, n));
  }
  if (v.is_mapping()) {
    const Object& o = v.as_object();
    if (o.empty()) return Value();
    return ctx.string(first ? o.front().first : o.back().first);
  }
  const Value items = as_items(ctx, name, v);
  const Array& a = items.as_array();
  if (a.empty()) return Value();
  return first ? a.front() : a.back();
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
  const Value items = as_items(ctx, name, operand);
  for (const Value& item : items.as_array()) {
    ctx.work();
    const Value a = attribute(ctx, item, attr);
    const bool pass = test.empty() ? a.truthy() : apply_test(ctx, test, a, test_args);
    if (pass == select) out.push_back(item);
  }
  return ctx.array(std::move(out));  // no longer than a list that exists
}

Value map_filter(RenderContext& ctx, const Value& operand, const Arguments& args) {
  args.check("map", 1, {"attribute", "default"});
  const Value* attr = args.get(99, "attribute");
  const Value* dflt = args.get(99, "default");
  const Value items = as_items(ctx, "map", operand);
  ctx.check_list(items.as_array().size());
  Array out;
  if (attr != nullptr) {
    const std::string& path = string_operand("map", *attr);
    for (const Value& item : items.as_array()) {
      ctx.work();
      Value v = attribute(ctx, item, path);
      out.push_back(v.is_undefined() && dflt ? *dflt : std::move(v));
    }
  } else {
    if (args.positional.empty()) throw Error("filter 'map' needs a filter name or attribute=");
    const std::string& filter = string_operand("map", args.positional[0]);
    const Kwargs none;
    for (const Value& item : items.as_array()) {
      ctx.work();
      out.push_back(apply_filter(ctx, filter, item, Arguments{{}, none}));
    }
  }
  return ctx.array(std::move(out));
}

Value tojson(RenderContext& ctx, const Value& operand, const Arguments& args) {
  args.check("tojson", 1, {"indent", "ensure_ascii", "sort_keys", "separators"});
  const Value* indent = args.get(0, "indent");
  int n = 0;
  if (indent != nullptr && !indent->is(Value::Kind::none)) {
    if (!indent->is(Value::Kind::integer) || indent->as_int() < 0 || indent->as_int() > 64) {
      throw Error("tojson(): indent must be an integer in [0, 64]");
    }
    n = static_cast<int>(indent->as_int());
  }
  ctx.work(operand.weight());  // every element is visited
  return ctx.string(to_json(operand, n, ctx.limits().max_output_bytes));
}

Value join(RenderContext& ctx, const std::string& name, const Value& operand,
           const Arguments& args) {
  args.check(name, 2, {"d", "attribute"});
  const Value* sep = args.get(0, "d");
  const Value* attr = args.get(1, "attribute");
  const std::string d = sep ? string_operand(name, *sep) : "";
  std::string out;
  bool first = true;
  const Value items = as_items(ctx, name, operand);
  for (const Value& item : items.as_array()) {
    ctx.check_string(out.size() + d.size());
    if (!first) out += d;
    first = false;
    const std::string s =
        stringify(ctx, attr ? attribute(ctx, item, string_operand(name, *attr)) : item);
    ctx.check_string(out.size() + s.size());
    out += s;
  }
  return ctx.string(std::move(out));
}

Value indent(RenderContext& ctx, const std::string& name, const Value& operand,
             const Arguments& args) {  // Python's indent(width=4, first=False, blank=False)
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
    ctx.check_string(out.size() + (indent ? pad.size() : 0) + line.size() + 1);
    if (indent) out += pad;
    out += line;
    if (nl == std::string::npos) break;
    out += '\n';
    at = nl + 1;
    first_line = false;
  }
  return ctx.string(std::move(out));
}

Value number(const std::string& name, const Value& operand, const Arguments& args) {
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
  const std::string_view s = text::trim(operand.as_string());
  if (name == "int") {
    int64_t i = 0;
    const auto r = std::from_chars(s.data(), s.data() + s.size(), i);
    return (r.ec == std::errc() && r.ptr == s.data() + s.size() && !s.empty()) ? Value::integer(i)
                                                                               : fallback;
  }
  const std::string text(s);
  char* end = nullptr;
  const double d = std::strtod(text.c_str(), &end);
  return (!s.empty() && end == text.c_str() + text.size()) ? Value::floating(d) : fallback;
}

}  // namespace

Value iteration_items(RenderContext& ctx, const Value& v) {
  switch (v.kind()) {
    case Value::Kind::array:
      return v;  // shared, not copied
    case Value::Kind::string: {
      const std::string& s = v.as_string();
      ctx.scan(s.size());
      ctx.check_list(text::code_point_count(s));  // a value per character: ~100 bytes per byte
      Array out;
      for (size_t at = 0; at < s.size(); at += text::code_point_length(s, at)) {
        out.push_back(Value::string(s.substr(at, text::code_point_length(s, at))));
      }
      return ctx.array(std::move(out));
    }
    case Value::Kind::object:
    case Value::Kind::ns: {
      ctx.check_list(v.as_object().size());
      Array out;
      for (const auto& [k, x] : v.as_object()) out.push_back(Value::string(k));
      return ctx.array(std::move(out));
    }
    default:
      return Value::array({});
  }
}

std::string stringify(RenderContext& ctx, const Value& v) {
  if (v.is(Value::Kind::none)) return "None";  // Python's str(None)
  return ctx.text_of(v);
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
  if (name == "tojson") return tojson(ctx, operand, args);
  if (name == "selectattr" || name == "rejectattr")
    return select_by_attribute(ctx, name, operand, args);
  if (name == "map") return map_filter(ctx, operand, args);
  if (name == "safe") return operand;
  if (name == "length" || name == "count") {
    args.check(name, 0, {});
    return Value::integer(length(ctx, operand));
  }
  if (name == "list") {
    args.check(name, 0, {});
    return as_items(ctx, name, operand);
  }
  if (name == "first" || name == "last") {
    args.check(name, 0, {});
    return first_or_last(ctx, name, operand);
  }
  if (name == "reverse") {
    args.check(name, 0, {});
    if (operand.is(Value::Kind::string)) {
      const std::string& s = operand.as_string();
      ctx.check_string(s.size());
      std::string out;
      out.reserve(s.size());
      for (size_t end = s.size(); end > 0; end -= text::code_point_length_before(s, end)) {
        out.append(s, end - text::code_point_length_before(s, end),
                   text::code_point_length_before(s, end));
      }
      return ctx.string(std::move(out));
    }
    const Value items = as_items(ctx, name, operand);
    const Array& a = items.as_array();
    ctx.check_list(a.size());
    return ctx.array(Array(a.rbegin(), a.rend()));
  }
  if (name == "join") return join(ctx, name, operand, args);
  if (name == "items") {
    args.check(name, 0, {});
    if (operand.is_undefined()) return Value::array({});
    if (!operand.is_mapping()) throw Error("filter 'items' needs a dict");
    const Object& o = operand.as_object();
    ctx.check_list(3 * o.size());  // a pair (a list of 2) per entry
    Array out;
    for (const auto& [k, v] : o) out.push_back(ctx.array({ctx.string(k), v}));
    return ctx.array(std::move(out));
  }
  if (name == "string") {
    args.check(name, 0, {});
    if (operand.is(Value::Kind::string)) return operand;
    return ctx.string(stringify(ctx, operand));
  }
  if (name == "int" || name == "float") {
    if (operand.is(Value::Kind::string)) ctx.scan(operand.as_string().size());
    return number(name, operand, args);
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
  // The string filters: each reads its operand once and builds at most its size.
  if (name == "trim") {
    args.check(name, 1, {"chars"});
    const std::string& s = string_operand(name, operand);
    const Value* chars = args.get(0, "chars");
    if (chars && !chars->is(Value::Kind::none)) {
      const std::string& set = string_operand(name, *chars);
      ctx.scan(s.size() + set.size());
      return ctx.string(std::string(text::strip_chars(s, set, true, true)));
    }
    ctx.scan(s.size());
    return ctx.string(std::string(text::trim(s)));
  }
  if (name == "upper" || name == "lower" || name == "title" || name == "capitalize") {
    args.check(name, 0, {});
    const std::string& s = string_operand(name, operand);
    ctx.check_string(s.size());
    if (name == "upper") return ctx.string(text::to_upper(s));
    if (name == "lower") return ctx.string(text::to_lower(s));
    if (name == "title") return ctx.string(text::title(s));
    return ctx.string(text::capitalize(s));
  }
  if (name == "indent") return indent(ctx, name, operand, args);
  if (name == "replace") {
    (void)string_operand(name, operand);
    return call_method(ctx, operand, "replace", args);
  }
  throw Error("unknown filter '" + name + "'");
}

}  // namespace llama::chat
