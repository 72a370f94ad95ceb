// parse_strict_json: nlohmann's SAX parser driving a DOM builder that refuses
// duplicate keys and deep nesting.
#include "strict_json.hpp"

#include <vector>

#include "llama/error.hpp"

namespace llama {
namespace {

using nlohmann::json;

// Builds the DOM as nlohmann's json_sax_dom_parser does; `stack_` holds the open
// containers, `keys_` the path to them for messages.
class StrictDomBuilder {
 public:
  bool null() { return value(nullptr); }
  bool boolean(bool v) { return value(v); }
  bool number_integer(json::number_integer_t v) { return value(v); }
  bool number_unsigned(json::number_unsigned_t v) { return value(v); }
  bool number_float(json::number_float_t v, const json::string_t&) { return value(v); }
  bool string(json::string_t& v) { return value(std::move(v)); }
  bool binary(json::binary_t&) { return fail("binary values are not JSON"); }

  bool start_object(std::size_t) { return open(json::value_t::object); }
  bool start_array(std::size_t) { return open(json::value_t::array); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }

  bool key(json::string_t& k) {
    json& object = *stack_.back();
    if (object.contains(k)) return fail("duplicate key \"" + k + "\"" + where());
    slot_ = &object[k];
    keys_.back() = k;
    return true;
  }

  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& ex) {
    std::string what = ex.what();  // "[json.exception.parse_error.101] parse error at ..."
    const size_t cut = what.find("] ");
    if (cut != std::string::npos) what.erase(0, cut + 2);
    return fail(what);
  }

  json& root() { return root_; }
  const std::string& error() const { return error_; }

 private:
  template <typename V>
  json* place(V&& v) {
    if (stack_.empty()) {
      root_ = json(std::forward<V>(v));
      return &root_;
    }
    json& parent = *stack_.back();
    if (parent.is_array()) {
      parent.emplace_back(std::forward<V>(v));
      return &parent.back();
    }
    *slot_ = json(std::forward<V>(v));
    return slot_;
  }
  template <typename V>
  bool value(V&& v) {
    place(std::forward<V>(v));
    return true;
  }
  bool open(json::value_t kind) {
    if (stack_.size() >= static_cast<size_t>(kMaxJsonDepth)) {
      return fail("nested deeper than " + std::to_string(kMaxJsonDepth) + " levels" + where());
    }
    stack_.push_back(place(kind));
    keys_.emplace_back();
    return true;
  }
  bool close() {
    stack_.pop_back();
    keys_.pop_back();
    return true;
  }
  std::string where() const {
    std::string path;
    for (size_t i = 0; i + 1 < keys_.size(); ++i) {
      if (keys_[i].empty()) continue;  // inside an array
      path += path.empty() ? "" : ".";
      path += keys_[i];
    }
    return path.empty() ? std::string() : " in \"" + path + "\"";
  }
  bool fail(std::string why) {
    if (error_.empty()) error_ = std::move(why);
    return false;
  }

  json root_;
  std::vector<json*> stack_;
  std::vector<std::string> keys_;
  json* slot_ = nullptr;
  std::string error_;
};

}  // namespace

nlohmann::json parse_strict_json(std::string_view text, const std::string& source) {
  StrictDomBuilder builder;
  const bool ok = json::sax_parse(text.begin(), text.end(), &builder, json::input_format_t::json,
                                  /*strict=*/true, /*ignore_comments=*/false);
  if (!ok) throw Error(source + ": invalid JSON: " + builder.error());
  return std::move(builder.root());
}

std::string json_kind(const nlohmann::json& j) {
  switch (j.type()) {
    case json::value_t::object:
      return "an object";
    case json::value_t::array:
      return "an array";
    case json::value_t::string:
      return "a string";
    case json::value_t::boolean:
      return "a boolean";
    case json::value_t::null:
      return "null";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float:
      return "a number";
    default:
      return "not a JSON value";
  }
}

std::string json_excerpt(const nlohmann::json& j) {
  std::string s = j.dump(-1, ' ', /*ensure_ascii=*/true, json::error_handler_t::replace);
  if (s.size() > 80) s = s.substr(0, 77) + "...";
  return s;
}

}  // namespace llama
