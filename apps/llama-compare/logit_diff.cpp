// Logit differences, with non-finite values counted as infinitely far off.
#include "logit_diff.hpp"

#include <cmath>
#include <limits>
#include <string>

#include "llama/error.hpp"
#include "llama/sampler.hpp"

namespace llama::compare {

LogitDiff diff_logits(std::span<const float> got, std::span<const float> want) {
  if (got.size() != want.size()) {
    throw Error("logits of different sizes: " + std::to_string(got.size()) + " against " +
                std::to_string(want.size()));
  }
  constexpr double kInf = std::numeric_limits<double>::infinity();
  LogitDiff d;
  double scale = 0;  // largest |want|
  for (size_t i = 0; i < got.size(); ++i) {
    const double g = got[i], w = want[i];
    const double diff = (std::isfinite(g) && std::isfinite(w)) ? std::abs(g - w) : kInf;
    if (diff > d.max_abs) {
      d.max_abs = diff;
      d.abs_index = static_cast<int64_t>(i);
    }
    if (std::isfinite(w)) scale = std::max(scale, std::abs(w));
  }
  if (d.max_abs > 0) d.max_rel = scale > 0 ? d.max_abs / scale : kInf;
  d.same_argmax = got.empty() || argmax(got) == argmax(want);
  return d;
}

}  // namespace llama::compare
