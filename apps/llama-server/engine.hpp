// The server's one generating thread: it owns the BatchGenerator (and through it the
// backend) and is the only caller of step(). HTTP threads submit requests and cancel
// them through a small inbox; results go back through each request's RequestChannel.
// Requests beyond the sequences wait in the generator's queue; past `max_queue`,
// submit() refuses with 503 at once, so no request is ever lost or waits unbounded.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <vector>

#include "llama/batch_generator.hpp"
#include "request_channel.hpp"
#include "token_rate.hpp"

namespace llama::server {

struct EngineOptions {
  int32_t sequences = 1;
  int64_t context = 0;  // positions per sequence (0: the config's seq_len)
  int64_t max_queue = 64;
};

// Counts since start (for /metrics and tests).
struct EngineStats {
  int64_t active = 0;           // submitted and not yet ended (exact when a result is posted)
  int64_t running = 0;          // of them, holding a sequence (as of the last step)
  int64_t waiting = 0;          // the others: in the inbox or the generator's queue
  int64_t finished = 0;         // ended on their own (stop, EOS, length)
  int64_t cancelled = 0;        // ended by cancel() or shutdown
  int64_t cancel_requests = 0;  // cancel() calls (a client left, a request refused)
  int64_t prompt_tokens = 0;
  int64_t cached_prompt_tokens = 0;
  int64_t generated_tokens = 0;  // of finished requests
  int64_t tokens_generated = 0;  // by every request, counted as each step samples them
  double tokens_per_second = 0;  // tokens_generated over the last 10 s
  bool draining = false;         // shutdown() called: new requests get 503
  double prompt_seconds = 0;     // backend time running prompts (GenerationTimings)
  double decode_seconds = 0;     // from each prompt's logits to its request's end
};

class Engine {
 public:
  // The backend, config and tokenizer must outlive the engine; the thread starts here.
  Engine(InferenceBackend& backend, const Config& config, const Tokenizer& tokenizer,
         const EngineOptions& options);
  ~Engine();  // shutdown(0s)
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Queues `request` (its callbacks are the engine's own). Throws ApiError 503 when
  // sequences and queue are all taken or the engine is shutting down.
  // `wakeup`: shared with other channels one thread waits on (null: none).
  std::shared_ptr<RequestChannel> submit(GenerationRequest request,
                                         std::shared_ptr<Wakeup> wakeup = nullptr);
  // Ends the request behind `channel` (queued or running); no effect once it ended.
  void cancel(const std::shared_ptr<RequestChannel>& channel);
  // Refuses new requests, lets those in flight run for up to `drain`, cancels the
  // rest, and joins the thread. Idempotent.
  void shutdown(std::chrono::milliseconds drain);

  EngineStats stats() const;
  // Each sequence as of the engine's last look (after taking requests, after each step).
  std::vector<SequenceState> sequences() const;
  int64_t context() const { return context_; }

 private:
  struct Command {
    std::shared_ptr<RequestChannel> channel;
    std::optional<GenerationRequest> request;  // empty: cancel
  };
  void run();
  void apply(Command& command);
  void fail_all(const std::string& why);
  void publish();  // engine thread: running, waiting and the sequences for other threads
  // Engine thread: adds the tokens generated since the last count to the live counter.
  void count_generated(uint64_t request, int64_t generated);

  BatchGenerator generator_;
  const int64_t context_;
  const int64_t capacity_;  // sequences + max_queue

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Command> inbox_;
  int64_t outstanding_ = 0;  // submitted and not yet ended
  bool stopping_ = false;
  std::chrono::steady_clock::time_point drain_until_;
  EngineStats stats_;
  std::vector<SequenceState> sequences_;
  mutable TokenRate rate_;  // prunes itself when read

  // Engine thread only: the generator's id of each live request.
  std::unordered_map<RequestChannel*, uint64_t> ids_;
  // Engine thread only: tokens each running request had generated at the last count.
  std::unordered_map<uint64_t, int64_t> counted_;
  std::mutex join_mutex_;  // shutdown() may be called from two threads
  std::thread thread_;
};

}  // namespace llama::server
