// What the interpreter and its built-ins share while rendering: the limits,
// the work done so far, and argument handling for built-in calls.
#pragma once

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

class RenderContext {
 public:
  explicit RenderContext(const RenderLimits& limits) : limits_(limits) {}

  const RenderLimits& limits() const { return limits_; }

  // Counts `units` of work; throws llama::Error past the limit.
  void work(uint64_t units = 1) {
    work_ += units;
    if (work_ > limits_.max_work) {
      throw Error("the template did more than " + std::to_string(limits_.max_work) +
                  " steps of work (an endless or runaway loop?)");
    }
  }

  // A string value, refused above the output limit; its bytes count as work.
  Value string(std::string s) {
    check_size(s.size(), "a string");
    work(1 + s.size() / 64);
    return Value::string(std::move(s));
  }

  // A list value, refused above the output limit's count of elements.
  Value array(Array items) {
    check_size(items.size(), "a list");
    work(1 + items.size() / 8);
    return Value::array(std::move(items));
  }

  void check_size(size_t n, const char* what) const {
    if (n > limits_.max_output_bytes) {
      throw Error(std::string(what) + " grew past the limit of " +
                  std::to_string(limits_.max_output_bytes));
    }
  }

 private:
  RenderLimits limits_;
  uint64_t work_ = 0;
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
bool apply_test(const std::string& name, const Value& operand, std::span<const Value> args);
// A method of a string, dict or namespace (`s.strip()`, `d.items()`).
Value call_method(RenderContext& ctx, const Value& self, const std::string& name,
                  const Arguments& args);
// Whether `self` has a method `name` (so `s.strip` without a call is a value).
bool has_method(const Value& self, std::string_view name);

// The string an operand is turned into by ~, join and string.
std::string stringify(const Value& v);

}  // namespace llama::chat
