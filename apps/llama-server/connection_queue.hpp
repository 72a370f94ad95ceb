// cpp-httplib's queue of accepted connections (its TaskQueue), bounded. cpp-httplib
// accepts a connection and enqueues a task that serves it on a pool thread; its own
// ThreadPool lets those tasks wait without limit. Here at most `max_open`
// connections are served or waiting; a task past that runs at once on one of a few
// refusing threads, where the route check (routes.cpp) sees refusing() and answers
// 503 with Connection: close. The task itself is opaque (a closure over the socket,
// and enqueue() returns nothing), so a connection cannot be dropped unread: it is
// answered instead.
#pragma once

#include <httplib.h>

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace llama::server {

class ConnectionQueue final : public httplib::TaskQueue {
 public:
  // `threads` serve connections; `max_open` >= threads bounds those served or waiting.
  ConnectionQueue(size_t threads, size_t max_open);
  ~ConnectionQueue() override;
  ConnectionQueue(const ConnectionQueue&) = delete;
  ConnectionQueue& operator=(const ConnectionQueue&) = delete;

  void enqueue(std::function<void()> fn) override;
  void shutdown() override;  // runs what is queued, then joins every thread

  // Whether the calling thread is answering a connection past the bound.
  static bool refusing();

 private:
  struct Jobs {
    std::deque<std::function<void()>> queue;
    std::vector<std::thread> threads;
  };
  void work(Jobs& jobs, bool refuser);

  const size_t max_open_;
  std::mutex mutex_;
  std::condition_variable changed_;
  Jobs served_, refused_;
  size_t open_ = 0;  // connections queued or being served by served_'s threads
  bool shutdown_ = false;
};

}  // namespace llama::server
