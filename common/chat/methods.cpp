// Methods of strings (Python's str: strip, split, replace, startswith, ...)
// and of dicts (items, keys, values, get), as `value.method(args)`.
#include <string_view>

#include "context.hpp"
#include "text.hpp"

namespace llama::chat {
namespace {

constexpr std::string_view kStringMethods[] = {
    "strip", "lstrip", "rstrip", "startswith", "endswith", "title", "capitalize",
    "upper", "lower",  "split",  "replace",    "join",     "count", "find"};
constexpr std::string_view kDictMethods[] = {"items", "keys", "values", "get"};

template <size_t N>
bool listed(const std::string_view (&names)[N], std::string_view name) {
  for (const std::string_view n : names) {
    if (n == name) return true;
  }
  return false;
}

const std::string& string_argument(const Value* v, const std::string& method, const char* what) {
  if (v == nullptr || !v->is(Value::Kind::string)) {
    throw Error(method + "() needs a string " + what);
  }
  return v->as_string();
}

// Python's str.split(sep=None, maxsplit=-1): calls `part` for each piece.
template <typename Part>
void split_parts(const std::string& s, const std::string* sep, int64_t maxsplit, Part part) {
  int64_t parts = 0;
  const auto push = [&](std::string_view p) {
    ++parts;
    part(p);
  };
  if (sep == nullptr) {  // runs of whitespace
    std::string_view rest = text::trim_left(s);
    while (!rest.empty()) {
      if (maxsplit >= 0 && parts >= maxsplit) {
        push(rest);  // the remainder keeps its trailing whitespace, as Python
        break;
      }
      size_t end = 0;
      while (end < rest.size() && text::whitespace_at(rest, end) == 0) ++end;
      push(rest.substr(0, end));
      rest = text::trim_left(rest.substr(end));
    }
    return;
  }
  size_t at = 0;
  while (maxsplit < 0 || parts < maxsplit) {
    const size_t hit = s.find(*sep, at);
    if (hit == std::string::npos) break;
    push(std::string_view(s).substr(at, hit - at));
    at = hit + sep->size();
  }
  push(std::string_view(s).substr(at));
}

// The pieces are counted first: a list of n pieces is ~100 bytes per piece,
// far more than the string, so it is checked before it is built.
Value split(RenderContext& ctx, const std::string& s, const Value* sep, int64_t maxsplit) {
  const std::string* d = nullptr;
  if (sep != nullptr && !sep->is(Value::Kind::none)) {
    d = &string_argument(sep, "split", "separator");
    if (d->empty()) throw Error("split(): empty separator");
  }
  ctx.scan(2 * s.size());
  size_t n = 0;
  split_parts(s, d, maxsplit, [&](std::string_view) { ++n; });
  ctx.check_list(n);
  ctx.check_string(s.size());
  Array out;
  out.reserve(n);
  split_parts(s, d, maxsplit,
              [&](std::string_view p) { out.push_back(ctx.string(std::string(p))); });
  return ctx.array(std::move(out));
}

bool affix_test(RenderContext& ctx, const std::string& s, const Value* arg,
                const std::string& method, bool prefix) {
  const auto test = [&](const std::string& a) {
    ctx.scan(a.size());
    return prefix ? s.starts_with(a) : s.ends_with(a);
  };
  if (arg != nullptr && arg->is(Value::Kind::array)) {  // a tuple of candidates
    for (const Value& a : arg->as_array()) {
      if (test(string_argument(&a, method, "or a tuple of strings"))) return true;
    }
    return false;
  }
  return test(string_argument(arg, method, "or a tuple of strings"));
}

Value string_method(RenderContext& ctx, const std::string& s, const std::string& name,
                    const Arguments& args) {
  if (name == "strip" || name == "lstrip" || name == "rstrip") {
    args.check(name, 1, {"chars"});
    const Value* chars = args.get(0, "chars");
    const bool left = name != "rstrip", right = name != "lstrip";
    if (chars != nullptr && !chars->is(Value::Kind::none)) {
      const std::string& set = string_argument(chars, name, "of characters");
      ctx.scan(s.size() + set.size());
      return ctx.string(std::string(text::strip_chars(s, set, left, right)));
    }
    ctx.scan(s.size());
    std::string_view out = s;
    if (left) out = text::trim_left(out);
    if (right) out = text::trim_right(out);
    return ctx.string(std::string(out));
  }
  if (name == "startswith" || name == "endswith") {
    args.check(name, 1, {});
    return Value::boolean(affix_test(ctx, s, args.get(0, ""), name, name == "startswith"));
  }
  if (name == "upper" || name == "lower" || name == "title" || name == "capitalize") {
    args.check(name, 0, {});
    ctx.check_string(s.size());
    if (name == "upper") return ctx.string(text::to_upper(s));
    if (name == "lower") return ctx.string(text::to_lower(s));
    if (name == "title") return ctx.string(text::title(s));
    return ctx.string(text::capitalize(s));
  }
  if (name == "split") {
    args.check(name, 2, {"sep", "maxsplit"});
    const Value* max = args.get(1, "maxsplit");
    if (max != nullptr && !max->is(Value::Kind::integer))
      throw Error("split(): maxsplit must be an integer");
    return split(ctx, s, args.get(0, "sep"), max ? max->as_int() : -1);
  }
  if (name == "replace") {
    args.check(name, 3, {"count"});
    const std::string& from = string_argument(args.get(0, "old"), name, "to replace");
    const std::string& to = string_argument(args.get(1, "new"), name, "replacement");
    const Value* count = args.get(2, "count");
    if (count != nullptr && !count->is(Value::Kind::integer) && !count->is(Value::Kind::none)) {
      throw Error("replace(): count must be an integer");
    }
    const int64_t n = count != nullptr && count->is(Value::Kind::integer) ? count->as_int() : -1;
    ctx.scan(s.size() * (1 + from.size() / 64));  // find() is O(text x pattern) at worst
    return ctx.string(text::replace(s, from, to, n, ctx.limits().max_output_bytes));
  }
  if (name == "join") {  // Python's sep.join(items)
    args.check(name, 1, {});
    const Value* items = args.get(0, "");
    if (items == nullptr || !items->is(Value::Kind::array)) throw Error("join() takes a list");
    std::string out;
    for (size_t i = 0; i < items->as_array().size(); ++i) {
      ctx.check_string(out.size() + s.size());
      if (i > 0) out += s;
      const std::string item = stringify(ctx, items->as_array()[i]);
      ctx.check_string(out.size() + item.size());
      out += item;
    }
    return ctx.string(std::move(out));
  }
  if (name == "count" || name == "find") {
    args.check(name, 1, {});
    const std::string& needle = string_argument(args.get(0, ""), name, "to look for");
    ctx.scan(s.size() * (1 + needle.size() / 64));
    if (name == "find") {
      const size_t at = s.find(needle);
      if (at == std::string::npos) return Value::integer(-1);
      return Value::integer(
          static_cast<int64_t>(text::code_point_count(std::string_view(s).substr(0, at))));
    }
    if (needle.empty()) return Value::integer(static_cast<int64_t>(text::code_point_count(s) + 1));
    int64_t n = 0;
    for (size_t at = s.find(needle); at != std::string::npos;
         at = s.find(needle, at + needle.size()))
      ++n;
    return Value::integer(n);
  }
  throw Error("strings have no method '" + name + "'");
}

Value dict_method(RenderContext& ctx, const Value& self, const std::string& name,
                  const Arguments& args) {
  const Object& o = self.as_object();
  if (name == "get") {
    args.check(name, 2, {"default"});
    const Value* key = args.get(0, "key");
    if (key == nullptr) throw Error("get() needs a key");
    if (key->is(Value::Kind::string)) {
      if (const Value* v = ctx.find(self, key->as_string())) return *v;
    }
    const Value* dflt = args.get(1, "default");
    return dflt ? *dflt : Value::none();
  }
  args.check(name, 0, {});
  ctx.check_list(name == "items" ? 3 * o.size() : o.size());  // items: a pair per entry
  Array out;
  for (const auto& [k, v] : o) {
    if (name == "items") {
      out.push_back(ctx.array({ctx.string(k), v}));
    } else if (name == "keys") {
      out.push_back(ctx.string(k));
    } else {
      out.push_back(v);
    }
  }
  return ctx.array(std::move(out));
}

}  // namespace

void Arguments::check(std::string_view callee, size_t max,
                      std::initializer_list<std::string_view> names) const {
  if (positional.size() > max) {
    throw Error(std::string(callee) + "() takes at most " + std::to_string(max) +
                " arguments, got " + std::to_string(positional.size()));
  }
  for (const auto& [k, v] : keyword) {
    bool known = false;
    for (const std::string_view n : names) known = known || n == k;
    if (!known) throw Error(std::string(callee) + "() has no argument '" + k + "'");
  }
}

bool has_method(const Value& self, std::string_view name) {
  if (self.is(Value::Kind::string)) return listed(kStringMethods, name);
  if (self.is(Value::Kind::object)) return listed(kDictMethods, name);
  return false;
}

Value call_method(RenderContext& ctx, const Value& self, const std::string& name,
                  const Arguments& args) {
  if (self.is(Value::Kind::string)) return string_method(ctx, self.as_string(), name, args);
  if (self.is(Value::Kind::object) && listed(kDictMethods, name)) {
    return dict_method(ctx, self, name, args);
  }
  throw Error(std::string("a ") + self.kind_name() + " has no method '" + name + "'");
}

}  // namespace llama::chat
