// Python's slices (seq[start:stop:step]) over lists and UTF-8 strings, with
// every index computed from a checked count: a step or bound near 2^63 never
// wraps around, and a string is walked once without a table of offsets.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "llama/chat/value.hpp"
#include "text.hpp"

namespace llama::chat {

// Python's slice.indices() for a sequence of `size` items and a non-zero step:
// the first index, the bound, and how many indices lie between. Every sum is
// checked (a step of 2^63 - 1 must not wrap around).
struct SliceRange {
  int64_t begin = 0, end = 0, step = 1;
  uint64_t count = 0;
};

inline SliceRange slice_range(const Value& start, const Value& stop, int64_t step, size_t size) {
  const auto n = static_cast<int64_t>(size);
  const auto clamp = [&](const Value& v, int64_t dflt, int64_t lo, int64_t hi) {
    if (v.is_undefined() || v.is(Value::Kind::none)) return dflt;
    int64_t i = v.as_int();
    if (i < 0) i = std::max(i + n, lo);
    return std::min(i, hi);
  };
  SliceRange r;
  r.step = step;
  const uint64_t magnitude =
      step > 0 ? static_cast<uint64_t>(step) : 0 - static_cast<uint64_t>(step);
  if (step > 0) {
    r.begin = clamp(start, 0, 0, n);
    r.end = clamp(stop, n, 0, n);
    if (r.end > r.begin) r.count = (static_cast<uint64_t>(r.end - r.begin) - 1) / magnitude + 1;
  } else {
    r.begin = clamp(start, n - 1, -1, n - 1);
    r.end = clamp(stop, -1, -1, n - 1);
    if (r.begin > r.end) r.count = (static_cast<uint64_t>(r.begin - r.end) - 1) / magnitude + 1;
  }
  return r;
}

// Calls visit(i) for each index of `r` in order.
template <typename Visit>
void for_each_index(const SliceRange& r, Visit visit) {
  int64_t i = r.begin;
  for (uint64_t k = 0; k < r.count; ++k) {
    visit(i);
    if (k + 1 < r.count) i += r.step;  // stays inside [begin, end): the count says so
  }
}

// The code points of `s` at the indices of `r`, walking the string once
// (forward for a positive step, backward for a negative one).
inline std::string slice_string(const std::string& s, const SliceRange& r) {
  std::string out;
  size_t pos = 0;
  int64_t at = 0;  // the code point starting at pos (forward) or ending at pos (backward: at - 1)
  if (r.step > 0) {
    for_each_index(r, [&](int64_t i) {
      for (; at < i; ++at) pos += text::code_point_length(s, pos);
      out.append(s, pos, text::code_point_length(s, pos));
    });
    return out;
  }
  pos = s.size();
  at = static_cast<int64_t>(text::code_point_count(s));
  for_each_index(r, [&](int64_t i) {
    for (; at > i + 1; --at) pos -= text::code_point_length_before(s, pos);
    const size_t len = text::code_point_length_before(s, pos);
    out.append(s, pos - len, len);
  });
  return out;
}

}  // namespace llama::chat
