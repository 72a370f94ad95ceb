// What --verify-checkpoint counts per tensor (min, max, mean of the finite values,
// and each kind of value that is not finite) and the one-line error that ends a
// report in which any value was not finite: exit 1 with the report alone said
// nothing on stderr, where errors go.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <ostream>
#include <string>

#include "llama/error.hpp"

namespace llama::cli {

struct ValueStats {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  double sum = 0;
  int64_t count = 0;
  int64_t nan = 0, pos_inf = 0, neg_inf = 0;

  void add(double v) {
    ++count;
    if (std::isnan(v)) {
      ++nan;
    } else if (std::isinf(v)) {
      ++(v > 0 ? pos_inf : neg_inf);
    } else {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
      sum += v;
    }
  }
  int64_t not_finite() const { return nan + pos_inf + neg_inf; }
  bool finite() const { return not_finite() == 0; }
  // "32768 of 32768 values (32768 +inf, 0 -inf, 0 NaN)"
  std::string not_finite_counts() const {
    return std::to_string(not_finite()) + " of " + std::to_string(count) + " values (" +
           std::to_string(pos_inf) + " +inf, " + std::to_string(neg_inf) + " -inf, " +
           std::to_string(nan) + " NaN)";
  }
  // "<lead>min .. max .. mean ..  finite", or what is not finite.
  void print(std::ostream& out, const char* lead = "  ") const {
    const int64_t finite_count = count - not_finite();
    if (finite_count > 0) {
      out << lead << "min " << lo << "  max " << hi << "  mean "
          << sum / static_cast<double>(finite_count);
    } else {
      out << lead << "no finite values";
    }
    out << (finite() ? "  finite\n" : "  NOT FINITE: " + not_finite_counts() + "\n");
  }
};

// The tensors with values that are not finite, for the error after the report.
class NonFiniteTally {
 public:
  void add(const std::string& file, const std::string& tensor, const ValueStats& s) {
    ++tensors_;
    if (s.finite()) return;
    if (bad_tensors_ == 0) first_ = file + ": " + tensor + " has " + s.not_finite_counts();
    ++bad_tensors_;
    bad_values_ += s.not_finite();
  }
  // Ends the report; throws Error (one line: how many values and tensors, the first
  // tensor and its counts) if any value was not finite.
  int finish(std::ostream& out) const {
    if (bad_tensors_ == 0) {
      out << "all values finite\n";
      return 0;
    }
    out << "some values are not finite\n" << std::flush;
    throw Error(first_ + " that are not finite; " + std::to_string(bad_values_) +
                " values in all are not finite, in " + std::to_string(bad_tensors_) + " of " +
                std::to_string(tensors_) + " tensors");
  }

 private:
  int64_t tensors_ = 0, bad_tensors_ = 0, bad_values_ = 0;
  std::string first_;
};

}  // namespace llama::cli
