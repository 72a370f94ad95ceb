// JSON to template values through nlohmann-json's SAX parser (a Debian
// package the project already uses), building Values directly: no DOM,
// linear time however many keys an object has (nlohmann's ordered_json
// searches its keys on every insert), and nesting refused before it is built.
#include "llama/chat/json_value.hpp"

#include <nlohmann/json.hpp>
#include <unordered_map>

#include "llama/error.hpp"

namespace llama::chat {
namespace {

using json = nlohmann::json;

class ValueBuilder {
 public:
  bool null() { return add(Value::none()); }
  bool boolean(bool b) { return add(Value::boolean(b)); }
  bool number_integer(json::number_integer_t i) { return add(Value::integer(i)); }
  bool number_unsigned(json::number_unsigned_t u) {
    if (u > static_cast<uint64_t>(INT64_MAX)) return add(Value::floating(static_cast<double>(u)));
    return add(Value::integer(static_cast<int64_t>(u)));
  }
  bool number_float(json::number_float_t d, const json::string_t&) {
    return add(Value::floating(d));
  }
  bool string(json::string_t& s) {
    if (!charge(s.size())) return false;
    return add(Value::string(std::move(s)));
  }
  bool binary(json::binary_t&) { return fail("binary values are not JSON"); }

  bool start_object(std::size_t) { return open(true); }
  bool start_array(std::size_t) { return open(false); }
  bool key(json::string_t& k) {
    if (!charge(2 * k.size() + 64)) return false;  // the entry's key and its hash node
    stack_.back().key = std::move(k);
    return true;
  }
  bool end_object() {
    Frame f = std::move(stack_.back());
    stack_.pop_back();
    return add(Value::object(std::move(f.entries)));
  }
  bool end_array() {
    Frame f = std::move(stack_.back());
    stack_.pop_back();
    return add(Value::array(std::move(f.items)));
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) {
    return fail(e.what());
  }

  Value& root() { return root_; }
  const std::string& error() const { return error_; }
  bool limit() const { return limit_; }

 private:
  struct Frame {
    bool object = false;
    Array items;
    Object entries;
    std::string key;  // of the value being read (which may be a container)
    std::unordered_map<std::string, size_t> at;  // key -> entry: a repeated key replaces, as Python
  };

  bool open(bool object) {
    // The values inside count too: a container at depth kMaxDepth could not hold any.
    if (stack_.size() + 1 >= static_cast<size_t>(Value::kMaxDepth)) {
      return fail("JSON nested deeper than " + std::to_string(Value::kMaxDepth) + " levels", true);
    }
    stack_.emplace_back();
    stack_.back().object = object;
    return true;
  }
  bool charge(size_t bytes) {
    bytes_ += bytes;
    if (bytes_ <= kMaxJsonValueBytes) return true;
    return fail(
        "the JSON's values would take more than " + std::to_string(kMaxJsonValueBytes) + " bytes",
        true);
  }
  bool add(Value v) {
    if (!charge(sizeof(Value))) return false;
    if (stack_.empty()) {
      root_ = std::move(v);
      return true;
    }
    Frame& f = stack_.back();
    if (!f.object) {
      f.items.push_back(std::move(v));
      return true;
    }
    const auto [it, added] = f.at.emplace(f.key, f.entries.size());
    if (added) {
      f.entries.emplace_back(std::move(f.key), std::move(v));
    } else {
      f.entries[it->second].second = std::move(v);
    }
    return true;
  }
  // `limit`: a bound of this reader, not a syntax error.
  bool fail(std::string why, bool limit = false) {
    if (error_.empty()) {
      error_ = std::move(why);
      limit_ = limit;
    }
    return false;
  }

  std::vector<Frame> stack_;
  size_t bytes_ = 0;
  Value root_;
  std::string error_;
  bool limit_ = false;
};

}  // namespace

Value value_from_json(std::string_view text, std::string_view what) {
  ValueBuilder builder;
  bool ok = false;
  try {
    ok = json::sax_parse(text.begin(), text.end(), &builder);
  } catch (const Error& e) {  // Value's own refusals
    throw Error(std::string(what) + ": " + e.what());
  }
  if (!ok) {
    throw Error(std::string(what) + (builder.limit() ? ": " : ": not valid JSON: ") +
                builder.error());
  }
  return std::move(builder.root());
}

Object variables_from_json(std::string_view json, std::string_view what) {
  const Value v = value_from_json(json, what);
  if (v.is(Value::Kind::array)) return Object{{"messages", v}};
  if (v.is(Value::Kind::object)) return v.as_object();
  throw Error(std::string(what) + ": expected a list of messages or an object of variables");
}

}  // namespace llama::chat
