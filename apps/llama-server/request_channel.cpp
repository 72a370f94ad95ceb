// The engine-to-HTTP-thread handoff of one request (request_channel.hpp).
#include "request_channel.hpp"

namespace llama::server {

void RequestChannel::post_piece(std::string_view piece) {
  {
    std::lock_guard lock(mutex_);
    if (ended_) return;
    text_ += piece;
  }
  changed_.notify_all();
}

void RequestChannel::post_finish(const Completion& completion) {
  {
    std::lock_guard lock(mutex_);
    if (ended_) return;
    finished_ = completion;
    ended_ = true;
  }
  changed_.notify_all();
}

void RequestChannel::post_error(ApiError error) {
  {
    std::lock_guard lock(mutex_);
    if (ended_) return;
    error_ = std::move(error);
    ended_ = true;
  }
  changed_.notify_all();
}

RequestChannel::Update RequestChannel::take(std::chrono::milliseconds wait) {
  std::unique_lock lock(mutex_);
  changed_.wait_for(lock, wait, [&] { return !text_.empty() || finished_ || error_; });
  Update u;
  u.text = std::move(text_);
  text_.clear();
  u.finished = std::move(finished_);
  finished_.reset();
  u.error = std::move(error_);
  error_.reset();
  return u;
}

RequestChannel::Update RequestChannel::wait_finished() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return finished_ || error_; });
  Update u;
  u.finished = std::move(finished_);
  u.error = std::move(error_);
  text_.clear();
  return u;
}

}  // namespace llama::server
