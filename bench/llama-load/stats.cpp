// Percentiles and means (stats.hpp).
#include "stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace llama::load {
namespace {

double nearest_rank(std::span<const double> sorted, double p) {
  const double n = static_cast<double>(sorted.size());
  const double rank = std::ceil(p / 100.0 * n);
  const size_t index = rank < 1 ? 0 : std::min(sorted.size(), static_cast<size_t>(rank)) - 1;
  return sorted[index];
}

}  // namespace

std::optional<double> percentile(std::span<const double> values, double p) {
  if (values.empty()) return std::nullopt;
  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  return nearest_rank(sorted, p);
}

std::optional<double> mean(std::span<const double> values) {
  if (values.empty()) return std::nullopt;
  return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

Percentiles percentiles(std::vector<double> values) {
  if (values.empty()) return {};
  std::sort(values.begin(), values.end());
  return {nearest_rank(values, 50), nearest_rank(values, 90), nearest_rank(values, 99)};
}

}  // namespace llama::load
