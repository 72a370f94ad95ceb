// Summary statistics of repeated measurements.
#pragma once

#include <span>

namespace llama::bench {

struct Summary {
  double median = 0;
  double min = 0;
  double max = 0;
};

// Median (mean of the middle two for an even count), min and max; all zero
// for no samples.
Summary summarize(std::span<const double> samples);

// Nearest-rank percentile, q in [0, 100]; 0 for no samples.
double percentile(std::span<const double> samples, double q);

}  // namespace llama::bench
