// The client threads of a level (load_run.hpp).
#include "load_run.hpp"

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

namespace llama::load {

LevelRun run_level(const LoadOptions& o, const std::function<std::string()>& next_body,
                   int concurrency, int64_t requests, double duration_s) {
  using Clock = std::chrono::steady_clock;
  LevelRun run;
  run.concurrency = concurrency;
  std::atomic<int64_t> next{0};
  std::mutex mutex;
  const Clock::time_point start = Clock::now();
  const Clock::time_point deadline = start + std::chrono::duration_cast<Clock::duration>(
                                                 std::chrono::duration<double>(duration_s));
  const auto another = [&] {
    if (requests > 0) return next.fetch_add(1) < requests;
    return Clock::now() < deadline;
  };
  {
    std::vector<std::jthread> clients;
    for (int i = 0; i < concurrency; ++i) {
      clients.emplace_back([&] {
        while (another()) {
          RequestRecord r = stream_request(o, next_body());
          std::lock_guard lock(mutex);
          run.records.push_back(std::move(r));
        }
      });
    }
  }  // joined
  run.wall_s = std::chrono::duration<double>(Clock::now() - start).count();
  return run;
}

}  // namespace llama::load
