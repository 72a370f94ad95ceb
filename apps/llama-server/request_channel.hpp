// What the engine thread sends back to the HTTP thread serving one request: text as
// it is generated with the logprobs of its tokens, then the finished Completion or an
// error. The engine only posts; the HTTP thread only waits and takes. Nothing here
// blocks the engine. Several channels may share one Wakeup, so that one thread can
// wait on the choices of a request with several prompts.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "api_error.hpp"
#include "llama/batch_generator.hpp"

namespace llama::server {

// Counts posts to the channels that share it, for a thread waiting on all of them.
class Wakeup {
 public:
  void notify();
  // The count of posts so far; waits up to `wait` while it is still `seen`.
  uint64_t wait(uint64_t seen, std::chrono::milliseconds wait);

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  uint64_t posts_ = 0;
};

class RequestChannel {
 public:
  explicit RequestChannel(std::shared_ptr<Wakeup> wakeup = nullptr) : wakeup_(std::move(wakeup)) {}

  // Engine thread.
  void post_started();  // the generator took the request (running or queued)
  // Logprobs come before the piece that carries their text and go out with it.
  void post_logprobs(std::span<const GeneratedLogprob> logprobs);
  void post_piece(std::string_view piece);
  void post_finish(const Completion& completion);
  void post_error(ApiError error);  // the request ends with it (a later finish is dropped)

  // HTTP thread: what arrived since the last take, once something did or `wait` passed.
  struct Update {
    std::string text;                        // pieces joined
    std::vector<GeneratedLogprob> logprobs;  // the logprobs of the tokens of `text`
    std::optional<Completion> finished;      // set once, with the last update
    std::optional<ApiError> error;
  };
  Update take(std::chrono::milliseconds wait);
  // Waits until the request ended; the whole text is in the Completion, every
  // logprob passed on in `logprobs`.
  Update wait_finished();
  // As wait_finished(), but nullopt when the request has not ended within `wait`.
  std::optional<Update> wait_finished(std::chrono::milliseconds wait);
  // Waits up to `wait` for the request to be taken by the generator or to end;
  // whether it was taken (or ended).
  bool wait_started(std::chrono::milliseconds wait);
  // The error the request ended with, if any (not taken away).
  std::optional<ApiError> error();

 private:
  void changed();  // with the lock released

  std::shared_ptr<Wakeup> wakeup_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::string text_;
  std::vector<GeneratedLogprob> held_logprobs_;  // until their piece (or the end) comes
  std::vector<GeneratedLogprob> logprobs_;
  std::optional<Completion> finished_;
  std::optional<ApiError> error_;
  bool started_ = false;
  bool ended_ = false;  // finished_ or error_ posted (taken or not)
};

}  // namespace llama::server
