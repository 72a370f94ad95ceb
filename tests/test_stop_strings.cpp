// StopMatcher: stop strings inside one piece, across pieces, overlapping
// candidates, held-back partial matches that resolve either way.
#include <catch2/catch.hpp>

#include "llama/error.hpp"
#include "llama/stop_strings.hpp"

using llama::StopMatcher;

namespace {

// Feeds `pieces` and returns everything emitted (flushed at the end unless matched).
std::string run(StopMatcher& m, const std::vector<std::string>& pieces,
                std::vector<std::string>* emitted = nullptr) {
  std::string out;
  for (const std::string& p : pieces) {
    const std::string e = m.feed(p);
    if (emitted) emitted->push_back(e);
    out += e;
    if (m.matched()) return out;
  }
  return out + m.flush();
}

}  // namespace

TEST_CASE("stop strings: inside a piece, across pieces, and the text from them on", "[stop]") {
  {
    StopMatcher m({"END"});
    CHECK(run(m, {"a story. ", "The END is near"}) == "a story. The ");
    CHECK(m.matched());
    CHECK(m.matched_stop() == "END");
    CHECK(m.feed("more") == "");  // nothing after a match
  }
  {
    StopMatcher m({"\n\n"});
    std::vector<std::string> emitted;
    CHECK(run(m, {"one", "\n", "\n", "two"}, &emitted) == "one");
    CHECK(emitted == std::vector<std::string>{"one", "", ""});  // the "\n" was held back
  }
  {
    StopMatcher m({"Lily"});
    std::vector<std::string> emitted;
    CHECK(run(m, {"Li", "on and Li", "l", "y"}, &emitted) == "Lion and ");
    CHECK(emitted == std::vector<std::string>{"", "Lion and ", "", ""});
  }
}

TEST_CASE("stop strings: held text is released when it stops being a prefix", "[stop]") {
  StopMatcher m({"<|end|>"});
  std::vector<std::string> emitted;
  CHECK(run(m, {"a <", "|en", "x> b"}, &emitted) == "a <|enx> b");
  CHECK(emitted == std::vector<std::string>{"a ", "", "<|enx> b"});
  CHECK(!m.matched());
  CHECK(m.matched_stop().empty());
  // Without a match, the end of generation flushes what was held.
  StopMatcher tail({"STOP"});
  CHECK(tail.feed("the ST") == "the ");
  CHECK(tail.flush() == "ST");
}

TEST_CASE("stop strings: the earliest of several wins", "[stop]") {
  StopMatcher m({"cat", "a c"});
  CHECK(run(m, {"I saw a cat"}) == "I saw ");
  CHECK(m.matched_stop() == "a c");
  // Both complete with the last piece; the text ends where the earlier one starts.
  StopMatcher n({"bb", "abbc"});
  CHECK(run(n, {"xa", "b", "bc"}) == "x");
  CHECK(n.matched_stop() == "abbc");
  StopMatcher none({});
  CHECK(none.empty());
  CHECK(run(none, {"anything"}) == "anything");
}

TEST_CASE("stop strings: an empty one is refused", "[stop]") {
  CHECK_THROWS_AS(StopMatcher({"ok", ""}), llama::Error);
}
