// What the routes share: the options, the model once loaded (null while loading),
// response ids, the streams being written (shutdown waits for them), the log.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>

#include "loaded_model.hpp"
#include "server_options.hpp"

namespace llama::server {

// Responses still being written; shutdown lets them end before it closes sockets.
class ActiveStreams {
 public:
  void enter();
  void leave();
  // Waits until none is left or `deadline` passes; whether none is left.
  bool wait_idle(std::chrono::steady_clock::time_point deadline);

 private:
  std::mutex mutex_;
  std::condition_variable idle_;
  int64_t count_ = 0;
};

struct ServerContext {
  explicit ServerContext(const ServerOptions& o, std::function<void(const std::string&)> log_line)
      : options(o), log(std::move(log_line)) {}

  const ServerOptions& options;
  std::atomic<const LoadedModel*> loaded{nullptr};  // set once, when ready
  std::atomic<uint64_t> next_id{1};
  ActiveStreams streams;
  std::function<void(const std::string&)> log;  // one line, no newline; thread-safe
};

}  // namespace llama::server
