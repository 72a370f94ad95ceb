// The bounded queue of accepted connections (connection_queue.hpp).
#include "connection_queue.hpp"

namespace llama::server {
namespace {

// Refusing threads: a refused client normally reads its 503 and closes at once; a
// few threads keep one that sends its request slowly from holding up the others.
constexpr size_t kRefusers = 4;

thread_local bool t_refusing = false;

}  // namespace

ConnectionQueue::ConnectionQueue(size_t threads, size_t max_open) : max_open_(max_open) {
  for (size_t i = 0; i < threads; ++i)
    served_.threads.emplace_back([this] { work(served_, false); });
  for (size_t i = 0; i < kRefusers; ++i)
    refused_.threads.emplace_back([this] { work(refused_, true); });
}

ConnectionQueue::~ConnectionQueue() { shutdown(); }

bool ConnectionQueue::refusing() { return t_refusing; }

void ConnectionQueue::enqueue(std::function<void()> fn) {
  {
    std::lock_guard lock(mutex_);
    if (open_ < max_open_) {
      ++open_;
      served_.queue.push_back(std::move(fn));
    } else {
      refused_.queue.push_back(std::move(fn));
    }
  }
  changed_.notify_all();
}

void ConnectionQueue::work(Jobs& jobs, bool refuser) {
  t_refusing = refuser;
  for (;;) {
    std::function<void()> fn;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return !jobs.queue.empty() || shutdown_; });
      if (jobs.queue.empty()) return;  // shutting down, nothing left
      fn = std::move(jobs.queue.front());
      jobs.queue.pop_front();
    }
    fn();
    if (!refuser) {
      std::lock_guard lock(mutex_);
      --open_;
    }
  }
}

void ConnectionQueue::shutdown() {
  {
    std::lock_guard lock(mutex_);
    shutdown_ = true;
  }
  changed_.notify_all();
  for (Jobs* jobs : {&served_, &refused_}) {
    for (std::thread& t : jobs->threads) {
      if (t.joinable()) t.join();
    }
  }
}

}  // namespace llama::server
