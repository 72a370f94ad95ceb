// SseParser (sse_parser.hpp), after the WHATWG "event stream interpretation" rules.
#include "sse_parser.hpp"

namespace llama::load {

std::vector<std::string> SseParser::feed(std::string_view bytes) {
  std::vector<std::string> events;
  for (const char c : bytes) {
    if (overflowed_) break;
    if (after_cr_) {
      after_cr_ = false;
      if (c == '\n') continue;  // the LF of a CRLF split across two reads or not
    }
    if (c == '\r' || c == '\n') {
      after_cr_ = c == '\r';
      end_line(events);
    } else if (line_.size() + data_.size() >= kMaxEventBytes) {
      overflowed_ = true;
      line_.clear();
      data_.clear();
      has_data_ = false;
    } else {
      line_.push_back(c);
    }
  }
  return events;
}

void SseParser::end_line(std::vector<std::string>& events) {
  if (line_.empty()) {
    if (has_data_) events.push_back(std::move(data_));
    data_.clear();
    has_data_ = false;
    return;
  }
  std::string_view line(line_);
  if (line.front() != ':') {
    const size_t colon = line.find(':');
    const std::string_view field = line.substr(0, colon);
    std::string_view value = colon == std::string_view::npos ? "" : line.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    if (field == "data") {
      if (has_data_) data_.push_back('\n');
      data_.append(value);
      has_data_ = true;
    }
  }
  line_.clear();
}

}  // namespace llama::load
