// Generated tokens per second over a sliding window, for /metrics: an autoscaler
// reads how busy a replica is now, not since it started. Not thread-safe: the
// engine guards it with its own mutex.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>

namespace llama::server {

class TokenRate {
 public:
  using Clock = std::chrono::steady_clock;
  explicit TokenRate(Clock::duration window = std::chrono::seconds(10)) : window_(window) {}

  void add(int64_t tokens, Clock::time_point now);
  // Tokens added within the window ending at `now`, divided by the window.
  double per_second(Clock::time_point now);

 private:
  void prune(Clock::time_point now);

  Clock::duration window_;
  std::deque<std::pair<Clock::time_point, int64_t>> events_;
  int64_t in_window_ = 0;
};

}  // namespace llama::server
