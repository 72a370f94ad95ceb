// The engine-to-HTTP-thread handoff of one request (request_channel.hpp).
#include "request_channel.hpp"

#include <iterator>

namespace llama::server {

void Wakeup::notify() {
  {
    std::lock_guard lock(mutex_);
    ++posts_;
  }
  changed_.notify_all();
}

uint64_t Wakeup::wait(uint64_t seen, std::chrono::milliseconds wait) {
  std::unique_lock lock(mutex_);
  changed_.wait_for(lock, wait, [&] { return posts_ != seen; });
  return posts_;
}

void RequestChannel::changed() {
  changed_.notify_all();
  if (wakeup_) wakeup_->notify();
}

void RequestChannel::post_started() {
  {
    std::lock_guard lock(mutex_);
    started_ = true;
  }
  changed();
}

void RequestChannel::post_logprobs(std::span<const GeneratedLogprob> logprobs) {
  std::lock_guard lock(mutex_);
  if (!ended_) held_logprobs_.insert(held_logprobs_.end(), logprobs.begin(), logprobs.end());
}

void RequestChannel::post_piece(std::string_view piece) {
  {
    std::lock_guard lock(mutex_);
    if (ended_) return;
    text_ += piece;
    logprobs_.insert(logprobs_.end(), std::make_move_iterator(held_logprobs_.begin()),
                     std::make_move_iterator(held_logprobs_.end()));
    held_logprobs_.clear();
  }
  changed();
}

void RequestChannel::post_finish(const Completion& completion) {
  {
    std::lock_guard lock(mutex_);
    if (ended_) return;
    finished_ = completion;
    logprobs_.insert(logprobs_.end(), std::make_move_iterator(held_logprobs_.begin()),
                     std::make_move_iterator(held_logprobs_.end()));
    held_logprobs_.clear();
    ended_ = true;
  }
  changed();
}

void RequestChannel::post_error(ApiError error) {
  {
    std::lock_guard lock(mutex_);
    if (ended_) return;
    error_ = std::move(error);
    ended_ = true;
  }
  changed();
}

RequestChannel::Update RequestChannel::take(std::chrono::milliseconds wait) {
  std::unique_lock lock(mutex_);
  changed_.wait_for(lock, wait, [&] { return !text_.empty() || finished_ || error_; });
  Update u;
  u.text = std::move(text_);
  text_.clear();
  u.logprobs = std::move(logprobs_);
  logprobs_.clear();
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
  u.logprobs = std::move(logprobs_);
  logprobs_.clear();
  u.finished = std::move(finished_);
  u.error = std::move(error_);
  text_.clear();
  return u;
}

std::optional<RequestChannel::Update> RequestChannel::wait_finished(
    std::chrono::milliseconds wait) {
  {
    std::unique_lock lock(mutex_);
    if (!changed_.wait_for(lock, wait, [&] { return finished_ || error_; })) return std::nullopt;
  }
  return wait_finished();
}

bool RequestChannel::wait_started(std::chrono::milliseconds wait) {
  std::unique_lock lock(mutex_);
  return changed_.wait_for(lock, wait, [&] { return started_ || ended_; });
}

std::optional<ApiError> RequestChannel::error() {
  std::lock_guard lock(mutex_);
  return error_;
}

}  // namespace llama::server
