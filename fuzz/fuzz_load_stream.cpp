// libFuzzer target: llama-load's reading of a server's stream (bench/llama-load/
// sse_parser.hpp, stream_chunk.hpp) on any bytes. The first byte picks where the
// bytes are cut into network reads; the events must not depend on the cuts (the
// same events as one read of the whole), none exceeds the parser's bound, and every
// event's data reads as a chunk of either endpoint, and any body as an error line of
// one line, without throwing.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.hpp"
#include "sse_parser.hpp"
#include "stream_chunk.hpp"

namespace {

using namespace llama::load;

std::vector<std::string> feed_in_reads(std::string_view bytes, size_t read_size) {
  SseParser parser;
  std::vector<std::string> events;
  for (size_t at = 0; at < bytes.size(); at += read_size) {
    for (std::string& e : parser.feed(bytes.substr(at, read_size))) events.push_back(std::move(e));
  }
  return events;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t read_size = 1 + data[0] % 17;
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);

  const std::vector<std::string> whole = feed_in_reads(bytes, std::max<size_t>(bytes.size(), 1));
  const std::vector<std::string> pieces = feed_in_reads(bytes, read_size);
  FUZZ_CHECK(whole == pieces, "events do not depend on where reads end");
  for (const std::string& event : whole) {
    FUZZ_CHECK(event.size() <= SseParser::kMaxEventBytes, "event within the bound");
    for (const Endpoint e : {Endpoint::completions, Endpoint::chat}) {
      const StreamChunk c = parse_stream_chunk(event, e);
      FUZZ_CHECK(!(c.done && (c.has_content || c.error)), "[DONE] carries nothing else");
      FUZZ_CHECK(!c.completion_tokens || !c.error, "usage and an error are exclusive");
    }
  }
  const std::string line = error_message(bytes);
  FUZZ_CHECK(line.find_first_of("\r\n") == std::string::npos, "an error message is one line");
  return 0;
}
