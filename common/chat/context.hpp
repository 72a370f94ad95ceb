// What the interpreter and its built-ins share while rendering: the limits,
// the work done and values built so far, and argument handling for built-in calls.
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "llama/chat/template.hpp"
#include "llama/chat/value.hpp"
#include "llama/error.hpp"

namespace llama::chat {

using Kwargs = std::vector<std::pair<std::string, Value>>;

// The budgets of one render (RenderLimits): every built-in charges the work it
// does and the values it builds here, before the work where it could be large.
class RenderContext {
 public:
  explicit RenderContext(const RenderLimits& limits) : limits_(limits) {}

  const RenderLimits& limits() const { return limits_; }

  // Counts `units` of work; throws llama::Error past the limit.
  void work(uint64_t units = 1) {
    work_ += std::min(units, limits_.max_work + 1);
    if (work_ > limits_.max_work) {
      throw Error("the template did more than " + std::to_string(limits_.max_work) +
                  " steps of work (an endless or runaway loop?)");
    }
  }
  // The work of reading `bytes` of text.
  void scan(size_t bytes) { work(1 + bytes / 64); }

  // Refuses, before it is built, a string of `bytes` past the output limit or
  // the value budget.
  void check_string(size_t bytes) const {
    check_size(bytes, "a string");
    check_memory(bytes, "a string of", bytes, "bytes");
  }
  // The same for a list of `items` elements.
  void check_list(size_t items) const {
    check_memory(list_bytes(items), "a list of", items, "items");
  }

  // A string value: checked, then its bytes counted as value memory and work.
  Value string(std::string s) {
    check_string(s.size());
    charge(s.size());
    return Value::string(std::move(s));
  }
  // A list value, the same way (sizeof(Value) per element).
  Value array(Array items) {
    check_list(items.size());
    charge(list_bytes(items.size()));
    return Value::array(std::move(items));
  }
  // A dict value.
  Value object(Object entries) {
    size_t bytes = entries.size() * sizeof(Object::value_type);
    for (const auto& [k, v] : entries) bytes += k.size();
    check_memory(bytes, "a dict of", entries.size(), "entries");
    charge(bytes);
    return Value::object(std::move(entries));
  }

  void check_size(size_t n, const char* what) const {
    if (n > limits_.max_output_bytes) {
      throw Error(std::string(what) + " grew past the limit of " +
                  std::to_string(limits_.max_output_bytes));
    }
  }

  // Built-ins that walk values, charged before they walk.
  bool equal(const Value& a, const Value& b) {
    if (same_storage(a, b)) return true;  // one list, dict or string: nothing to walk
    work(std::min(a.weight(), b.weight()));
    return chat::equal(a, b);
  }
  // The text `{{ v }}` prints (to_output), within the output limit.
  std::string text_of(const Value& v) {
    work(v.weight());
    return to_output(v, limits_.max_output_bytes);
  }
  // A dict's entry (a scan of its entries), or nullptr.
  const Value* find(const Value& object, std::string_view key) {
    if (!object.is_mapping()) return nullptr;
    work(1 + object.as_object().size() / 16);
    return object.find(key);
  }

 private:
  static bool same_storage(const Value& a, const Value& b) {
    if (a.kind() != b.kind()) return false;
    if (a.is(Value::Kind::array)) return &a.as_array() == &b.as_array();
    if (a.is(Value::Kind::object)) return &a.as_object() == &b.as_object();
    if (a.is(Value::Kind::string)) return &a.as_string() == &b.as_string();
    return false;
  }
  // Saturates instead of wrapping: range(2**62) asks for more items than bytes exist.
  static uint64_t list_bytes(size_t items) {
    return items > UINT64_MAX / sizeof(Value) ? UINT64_MAX : uint64_t{items} * sizeof(Value);
  }

  // Refuses `bytes` more of values; the message names what was being made
  // ("a list of" `count` "items").
  void check_memory(uint64_t bytes, const char* what, size_t count, const char* unit) const {
    if (bytes > limits_.max_value_bytes || value_bytes_ > limits_.max_value_bytes - bytes) {
      throw Error("the template's values would take more than " +
                  std::to_string(limits_.max_value_bytes) + " bytes (making " + what + " " +
                  std::to_string(count) + " " + unit + ")");
    }
  }
  // Counts `bytes` of values built, and their work (1 per 64 bytes).
  void charge(uint64_t bytes) {
    value_bytes_ += bytes;
    work(1 + bytes / 64);
  }

  RenderLimits limits_;
  uint64_t work_ = 0;
  uint64_t value_bytes_ = 0;
};

// The arguments of a built-in call: positional, then keyword.
struct Arguments {
  std::span<const Value> positional;
  const Kwargs& keyword;

  // Positional i, else keyword `name`, else nullptr.
  const Value* get(size_t i, std::string_view name) const {
    if (i < positional.size()) return &positional[i];
    for (const auto& [k, v] : keyword) {
      if (k == name) return &v;
    }
    return nullptr;
  }
  // Refuses more than `max` positional arguments or keywords not in `names`.
  void check(std::string_view callee, size_t max,
             std::initializer_list<std::string_view> names) const;
};

// Built-ins, each throwing llama::Error (the interpreter adds the line).
Value apply_filter(RenderContext& ctx, const std::string& name, const Value& operand,
                   const Arguments& args);
bool apply_test(RenderContext& ctx, const std::string& name, const Value& operand,
                std::span<const Value> args);
// A method of a string, dict or namespace (`s.strip()`, `d.items()`).
Value call_method(RenderContext& ctx, const Value& self, const std::string& name,
                  const Arguments& args);
// Whether `self` has a method `name` (so `s.strip` without a call is a value).
bool has_method(const Value& self, std::string_view name);

// The string an operand is turned into by ~, join and string.
std::string stringify(RenderContext& ctx, const Value& v);

// What a for loop and the list filters iterate: a list itself (shared), a
// string's characters, a dict's keys; anything else (undefined) as no items.
Value iteration_items(RenderContext& ctx, const Value& v);

}  // namespace llama::chat
