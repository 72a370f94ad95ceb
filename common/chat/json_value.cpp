// JSON to template values through nlohmann-json (a Debian package the project
// already uses), refusing nesting the Value type would not accept before
// recursing into it.
#include "llama/chat/json_value.hpp"

#include <nlohmann/json.hpp>

#include "llama/error.hpp"

namespace llama::chat {
namespace {

Value convert(const nlohmann::ordered_json& j, int depth, std::string_view what) {
  if (depth >= Value::kMaxDepth) {
    throw Error(std::string(what) + ": JSON nested deeper than " +
                std::to_string(Value::kMaxDepth) + " levels");
  }
  switch (j.type()) {
    case nlohmann::ordered_json::value_t::null:
      return Value::none();
    case nlohmann::ordered_json::value_t::boolean:
      return Value::boolean(j.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer:
      return Value::integer(j.get<int64_t>());
    case nlohmann::ordered_json::value_t::number_unsigned: {
      const auto u = j.get<uint64_t>();
      if (u > static_cast<uint64_t>(INT64_MAX)) return Value::floating(static_cast<double>(u));
      return Value::integer(static_cast<int64_t>(u));
    }
    case nlohmann::ordered_json::value_t::number_float:
      return Value::floating(j.get<double>());
    case nlohmann::ordered_json::value_t::string:
      return Value::string(j.get<std::string>());
    case nlohmann::ordered_json::value_t::array: {
      Array items;
      items.reserve(j.size());
      for (const auto& x : j) items.push_back(convert(x, depth + 1, what));
      return Value::array(std::move(items));
    }
    case nlohmann::ordered_json::value_t::object: {
      Object entries;
      entries.reserve(j.size());
      for (const auto& [k, x] : j.items()) entries.emplace_back(k, convert(x, depth + 1, what));
      return Value::object(std::move(entries));
    }
    default:
      throw Error(std::string(what) + ": unsupported JSON value");
  }
}

nlohmann::ordered_json parse(std::string_view json, std::string_view what) {
  try {
    return nlohmann::ordered_json::parse(json);
  } catch (const nlohmann::json::exception& e) {
    throw Error(std::string(what) + ": not valid JSON: " + e.what());
  }
}

}  // namespace

Value value_from_json(std::string_view json, std::string_view what) {
  return convert(parse(json, what), 0, what);
}

Object variables_from_json(std::string_view json, std::string_view what) {
  const Value v = value_from_json(json, what);
  if (v.is(Value::Kind::array)) return Object{{"messages", v}};
  if (v.is(Value::Kind::object)) return v.as_object();
  throw Error(std::string(what) + ": expected a list of messages or an object of variables");
}

}  // namespace llama::chat
