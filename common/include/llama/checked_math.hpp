// Overflow-checked size arithmetic for everything computed from file headers.
#pragma once

#include <cstdint>
#include <string>

#include "llama/error.hpp"

namespace llama {

// Product of non-negative factors; throws Error naming `what` on overflow.
inline int64_t checked_mul(int64_t a, int64_t b, const std::string& what) {
  int64_t r = 0;
  if (a < 0 || b < 0 || __builtin_mul_overflow(a, b, &r)) {
    throw Error(what + ": size overflows 64-bit arithmetic");
  }
  return r;
}

inline int64_t checked_add(int64_t a, int64_t b, const std::string& what) {
  int64_t r = 0;
  if (a < 0 || b < 0 || __builtin_add_overflow(a, b, &r)) {
    throw Error(what + ": size overflows 64-bit arithmetic");
  }
  return r;
}

}  // namespace llama
