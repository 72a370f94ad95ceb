// fit_prompt: refuse, or keep the beginning or the end of a prompt.
#include "llama/prompt_fit.hpp"

#include <algorithm>

#include "llama/error.hpp"

namespace llama {

const char* to_string(PromptTruncation t) {
  switch (t) {
    case PromptTruncation::left:
      return "left";
    case PromptTruncation::right:
      return "right";
    default:
      return "refuse";
  }
}

PromptTruncation parse_prompt_truncation(const std::string& s) {
  if (s == "left") return PromptTruncation::left;
  if (s == "right") return PromptTruncation::right;
  if (s == "refuse") return PromptTruncation::refuse;
  throw Error("must be left or right, got '" + s + "'");
}

int64_t fit_prompt(std::vector<int32_t>& tokens, int64_t context, int64_t reserve,
                   PromptTruncation truncation, int32_t bos) {
  const auto n = static_cast<int64_t>(tokens.size());
  if (context < 1) throw Error("the context must hold at least one position");
  if (n <= context) return 0;
  if (truncation == PromptTruncation::refuse) {
    throw Error("the prompt is " + std::to_string(n) + " tokens, longer than the context of " +
                std::to_string(context) + " positions");
  }
  const int64_t keep = std::max<int64_t>(1, context - std::clamp<int64_t>(reserve, 0, context));
  if (truncation == PromptTruncation::left) {
    tokens.resize(static_cast<size_t>(keep));
  } else {
    const bool bos_first = bos >= 0 && tokens.front() == bos && keep > 1;
    const int64_t tail = bos_first ? keep - 1 : keep;
    std::vector<int32_t> kept;
    kept.reserve(static_cast<size_t>(keep));
    if (bos_first) kept.push_back(bos);
    kept.insert(kept.end(), tokens.end() - tail, tokens.end());
    tokens = std::move(kept);
  }
  return n - keep;
}

}  // namespace llama
