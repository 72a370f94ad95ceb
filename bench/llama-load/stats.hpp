// Nearest-rank percentiles and means of measured values (seconds, tokens/s).
#pragma once

#include <optional>
#include <span>
#include <vector>

namespace llama::load {

// The nearest-rank percentile: the smallest value such that at least p percent of
// `values` are <= it, i.e. sorted[ceil(p/100 * n) - 1] (p in (0, 100]; p = 0 gives the
// minimum). nullopt for no values. No interpolation: every figure is a measured one.
std::optional<double> percentile(std::span<const double> values, double p);

// The arithmetic mean; nullopt for no values.
std::optional<double> mean(std::span<const double> values);

struct Percentiles {
  std::optional<double> p50, p90, p99;
};
Percentiles percentiles(std::vector<double> values);

}  // namespace llama::load
