// Median, extremes and nearest-rank percentiles over copies of the samples.
#include "stats.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace llama::bench {

Summary summarize(std::span<const double> samples) {
  if (samples.empty()) return {};
  std::vector<double> s(samples.begin(), samples.end());
  std::sort(s.begin(), s.end());
  const size_t n = s.size();
  const double median = n % 2 == 1 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
  return {median, s.front(), s.back()};
}

double percentile(std::span<const double> samples, double q) {
  if (samples.empty()) return 0;
  std::vector<double> s(samples.begin(), samples.end());
  std::sort(s.begin(), s.end());
  const double rank = std::ceil(q / 100.0 * static_cast<double>(s.size()));
  const size_t i = rank < 1 ? 0 : std::min(s.size() - 1, static_cast<size_t>(rank) - 1);
  return s[i];
}

}  // namespace llama::bench
