// What the engine thread sends back to the HTTP thread serving one request: text as
// it is generated, then the finished Completion or an error. The engine only posts;
// the HTTP thread only waits and takes. Nothing here blocks the engine.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>

#include "api_error.hpp"
#include "llama/batch_generator.hpp"

namespace llama::server {

class RequestChannel {
 public:
  // Engine thread.
  void post_piece(std::string_view piece);
  void post_finish(const Completion& completion);
  void post_error(ApiError error);  // the request ends with it (a later finish is dropped)

  // HTTP thread: what arrived since the last take, once something did or `wait` passed.
  struct Update {
    std::string text;                    // pieces joined
    std::optional<Completion> finished;  // set once, with the last update
    std::optional<ApiError> error;
  };
  Update take(std::chrono::milliseconds wait);
  // Waits until the request ended; the whole text is in the Completion.
  Update wait_finished();

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::string text_;
  std::optional<Completion> finished_;
  std::optional<ApiError> error_;
  bool ended_ = false;  // finished_ or error_ posted (taken or not)
};

}  // namespace llama::server
