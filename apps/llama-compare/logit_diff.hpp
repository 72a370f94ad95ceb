// How far one backend's logits are from another's at one position: the
// measure llama-compare reports and the conformance suite checks.
#pragma once

#include <cstdint>
#include <span>

namespace llama::compare {

struct LogitDiff {
  double max_abs = 0;      // largest |got - want|; infinite when `got` is not finite
  int64_t abs_index = -1;  // vocabulary index of max_abs, -1 when there is no difference
  double max_rel = 0;      // max_abs / largest |want| (infinite when want is all zeros)
  bool same_argmax = true;
};

// Compares `got` against `want` (the baseline); throws llama::Error when their
// sizes differ.
LogitDiff diff_logits(std::span<const float> got, std::span<const float> want);

}  // namespace llama::compare
