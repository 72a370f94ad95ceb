// An incremental Server-Sent Events parser: bytes in as the network delivers them (an
// event may be split anywhere, even inside a CRLF), each complete event's data out.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace llama::load {

class SseParser {
 public:
  // The longest event kept (its data lines together); a stream with a longer one stops
  // being parsed: overflowed() is then true and feed returns nothing more.
  static constexpr size_t kMaxEventBytes = size_t{16} << 20;

  // Feeds the next bytes; returns the data of each event they complete, in order.
  // Lines end with LF, CRLF or CR; an event ends at a blank line; its `data:` lines
  // are joined with LF; comments (`:` lines) and other fields are skipped.
  std::vector<std::string> feed(std::string_view bytes);

  // Bytes held for an event not yet complete (a stream that ended mid-event).
  bool pending() const { return !line_.empty() || has_data_; }

  bool overflowed() const { return overflowed_; }

 private:
  void end_line(std::vector<std::string>& events);

  std::string line_;
  std::string data_;
  bool has_data_ = false;
  bool after_cr_ = false;  // the last byte was CR: an LF next belongs to it
  bool overflowed_ = false;
};

}  // namespace llama::load
