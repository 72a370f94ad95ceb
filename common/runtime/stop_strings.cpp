// StopMatcher: the earliest occurrence of any stop string in held + piece
// ends the text there; otherwise the longest tail that is a proper prefix of a
// stop string is held back.
#include "llama/stop_strings.hpp"

#include "llama/error.hpp"

namespace llama {

StopMatcher::StopMatcher(std::vector<std::string> stops) : stops_(std::move(stops)) {
  for (const std::string& s : stops_) {
    if (s.empty()) throw Error("a stop string must not be empty");
  }
}

std::string StopMatcher::feed(std::string_view piece) {
  if (matched()) return {};
  std::string text = std::move(held_);
  held_.clear();
  text.append(piece);
  // The held text held no whole stop string, so a match starts in it or later.
  size_t best = std::string::npos;
  for (size_t i = 0; i < stops_.size(); ++i) {
    const size_t at = text.find(stops_[i]);
    if (at < best) {
      best = at;
      matched_ = static_cast<int>(i);
    }
  }
  if (best != std::string::npos) {
    text.resize(best);
    return text;
  }
  // Hold back the longest suffix that begins some stop string.
  size_t hold = 0;
  for (const std::string& s : stops_) {
    for (size_t n = std::min(s.size() - 1, text.size()); n > hold; --n) {
      if (std::string_view(text).substr(text.size() - n) == std::string_view(s).substr(0, n)) {
        hold = n;
        break;
      }
    }
  }
  held_ = text.substr(text.size() - hold);
  text.resize(text.size() - hold);
  return text;
}

std::string StopMatcher::flush() {
  std::string out = std::move(held_);
  held_.clear();
  return out;
}

const std::string& StopMatcher::matched_stop() const {
  static const std::string none;
  return matched() ? stops_[static_cast<size_t>(matched_)] : none;
}

}  // namespace llama
