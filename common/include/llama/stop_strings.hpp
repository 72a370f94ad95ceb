// Stop strings over streamed text: generation ends as soon as the text
// contains one of them, wherever it falls (inside one token's piece or across
// several, as OpenAI's API and llama.cpp's server match), and the text from
// the stop string on is never emitted. Text that could still be the start of
// a stop string is held back until the next piece resolves it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace llama {

class StopMatcher {
 public:
  // Throws Error if a stop string is empty.
  explicit StopMatcher(std::vector<std::string> stops);

  // Appends `piece` to the text and returns what can be emitted now: all of
  // it unless its end may begin a stop string (held back), or, once a stop
  // string appears, the text before it (then matched() is true and further
  // pieces are ignored).
  std::string feed(std::string_view piece);
  // The text still held back, at the end of generation without a match.
  std::string flush();

  bool matched() const { return matched_ >= 0; }
  // The stop string that matched ("" if none).
  const std::string& matched_stop() const;
  bool empty() const { return stops_.empty(); }

 private:
  std::vector<std::string> stops_;
  std::string held_;
  int matched_ = -1;
};

}  // namespace llama
