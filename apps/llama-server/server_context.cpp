// Counting the responses still being written (server_context.hpp).
#include "server_context.hpp"

namespace llama::server {

void ActiveStreams::enter() {
  std::lock_guard lock(mutex_);
  ++count_;
}

void ActiveStreams::leave() {
  {
    std::lock_guard lock(mutex_);
    --count_;
  }
  idle_.notify_all();
}

bool ActiveStreams::wait_idle(std::chrono::steady_clock::time_point deadline) {
  std::unique_lock lock(mutex_);
  return idle_.wait_until(lock, deadline, [&] { return count_ == 0; });
}

}  // namespace llama::server
