// The sliding window of generated tokens (token_rate.hpp).
#include "token_rate.hpp"

namespace llama::server {

void TokenRate::add(int64_t tokens, Clock::time_point now) {
  if (tokens <= 0) return;
  prune(now);
  // One entry per step at most: a step's tokens all arrive at one time.
  if (!events_.empty() && events_.back().first == now) {
    events_.back().second += tokens;
  } else {
    events_.emplace_back(now, tokens);
  }
  in_window_ += tokens;
}

double TokenRate::per_second(Clock::time_point now) {
  prune(now);
  return static_cast<double>(in_window_) / std::chrono::duration<double>(window_).count();
}

void TokenRate::prune(Clock::time_point now) {
  while (!events_.empty() && events_.front().first <= now - window_) {
    in_window_ -= events_.front().second;
    events_.pop_front();
  }
}

}  // namespace llama::server
