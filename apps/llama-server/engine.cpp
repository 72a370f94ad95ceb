// The engine thread's loop (engine.hpp): take commands, step, post results.
#include "engine.hpp"

#include <new>
#include <vector>

#include "llama/error.hpp"

namespace llama::server {

Engine::Engine(InferenceBackend& backend, const Config& config, const Tokenizer& tokenizer,
               const EngineOptions& options)
    // The generator's own queue is never the limit: submit() counts every request
    // not yet ended against sequences + max_queue, so add() always finds room, even
    // in the moment between a request's on_finish and its sequence being released.
    : generator_(backend, config, tokenizer,
                 {.sequences = options.sequences,
                  .context = options.context,
                  .max_queue = options.max_queue + options.sequences}),
      context_(options.context > 0 ? options.context : config.seq_len),
      capacity_(options.sequences + options.max_queue),
      thread_([this] {
        publish();
        run();
      }) {}

Engine::~Engine() { shutdown(std::chrono::milliseconds(0)); }

std::vector<SequenceState> Engine::sequences() const {
  std::lock_guard lock(mutex_);
  return sequences_;
}

std::shared_ptr<RequestChannel> Engine::submit(GenerationRequest request,
                                               std::shared_ptr<Wakeup> wakeup) {
  auto channel = std::make_shared<RequestChannel>(std::move(wakeup));
  {
    std::lock_guard lock(mutex_);
    if (stopping_) throw ApiError(503, "the server is shutting down");
    if (outstanding_ >= capacity_) {
      throw ApiError(503, "the server is busy: " + std::to_string(outstanding_) +
                              " requests are running or queued, the most it takes "
                              "(--parallel and --queue)");
    }
    ++outstanding_;
    ++stats_.waiting;
    inbox_.push_back({channel, std::move(request)});
  }
  wake_.notify_all();
  return channel;
}

void Engine::cancel(const std::shared_ptr<RequestChannel>& channel) {
  {
    std::lock_guard lock(mutex_);
    ++stats_.cancel_requests;
    inbox_.push_back({channel, std::nullopt});
  }
  wake_.notify_all();
}

void Engine::shutdown(std::chrono::milliseconds drain) {
  {
    std::lock_guard lock(mutex_);
    if (!stopping_) {
      stopping_ = true;
      drain_until_ = std::chrono::steady_clock::now() + drain;
    }
  }
  wake_.notify_all();
  std::lock_guard join_lock(join_mutex_);
  if (thread_.joinable()) thread_.join();
}

EngineStats Engine::stats() const {
  std::lock_guard lock(mutex_);
  EngineStats s = stats_;
  s.active = outstanding_;
  s.draining = stopping_;
  s.tokens_per_second = rate_.per_second(std::chrono::steady_clock::now());
  return s;
}

void Engine::apply(Command& command) {
  const std::shared_ptr<RequestChannel>& channel = command.channel;
  if (!command.request) {
    if (const auto it = ids_.find(channel.get()); it != ids_.end()) generator_.cancel(it->second);
    return;
  }
  GenerationRequest request = std::move(*command.request);
  request.on_piece = [ch = channel.get()](std::string_view piece) { ch->post_piece(piece); };
  if (request.logprobs >= 0) {
    request.on_logprobs = [ch = channel.get()](std::span<const GeneratedLogprob> logprobs) {
      ch->post_logprobs(logprobs);
    };
  }
  request.on_finish = [this, channel](const Completion& done) {
    ids_.erase(channel.get());
    count_generated(done.id, done.usage.completion_tokens);
    counted_.erase(done.id);
    {
      std::lock_guard lock(mutex_);
      --outstanding_;
      ++(done.stop_reason == StopReason::cancelled ? stats_.cancelled : stats_.finished);
      stats_.prompt_tokens += done.usage.prompt_tokens;
      stats_.cached_prompt_tokens += done.usage.cached_prompt_tokens;
      stats_.generated_tokens += done.usage.completion_tokens;
      stats_.prompt_seconds += done.timings.prompt_ms / 1000.0;
      stats_.decode_seconds += done.timings.decode_ms / 1000.0;
    }
    channel->post_finish(done);
  };
  try {
    ids_[channel.get()] = generator_.add(std::move(request));
    channel->post_started();
  } catch (const std::exception& e) {
    // The HTTP thread checked what it could; an Error left is the request's fault,
    // anything else (out of memory) the server's.
    const bool request_fault = dynamic_cast<const Error*>(&e) != nullptr;
    channel->post_error(ApiError(request_fault ? 400 : 503, e.what()));
    std::lock_guard lock(mutex_);
    --outstanding_;
  }
}

void Engine::fail_all(const std::string& why) {
  std::vector<uint64_t> ids;
  for (const auto& [channel, id] : ids_) {
    // post_error first: the cancel's finish that follows is then dropped.
    channel->post_error(ApiError(500, "generation failed: " + why));
    ids.push_back(id);
  }
  for (const uint64_t id : ids) generator_.cancel(id);
}

void Engine::count_generated(uint64_t request, int64_t generated) {
  int64_t& counted = counted_[request];
  const int64_t added = generated - counted;
  if (added <= 0) return;
  counted = generated;
  std::lock_guard lock(mutex_);
  stats_.tokens_generated += added;
  rate_.add(added, std::chrono::steady_clock::now());
}

void Engine::publish() {
  std::vector<SequenceState> sequences = generator_.sequence_states();
  for (const SequenceState& q : sequences) {
    if (q.request != 0) count_generated(q.request, q.generated);
  }
  std::lock_guard lock(mutex_);
  stats_.running = generator_.running();
  stats_.waiting = outstanding_ - stats_.running;
  sequences_ = std::move(sequences);
}

void Engine::run() {
  for (;;) {
    std::deque<Command> commands;
    bool stopping = false, drain_over = false;
    {
      std::unique_lock lock(mutex_);
      if (generator_.running() + generator_.queued() == 0)
        wake_.wait(lock, [&] { return !inbox_.empty() || stopping_; });
      commands.swap(inbox_);
      stopping = stopping_;
      drain_over = stopping_ && std::chrono::steady_clock::now() >= drain_until_;
    }
    for (Command& command : commands) apply(command);
    publish();
    const bool busy = generator_.running() + generator_.queued() > 0;
    if (stopping && (!busy || drain_over)) {
      while (!ids_.empty()) {
        const auto it = ids_.begin();
        if (!generator_.cancel(it->second)) ids_.erase(it);
      }
      break;
    }
    if (busy) {
      try {
        generator_.step();
      } catch (const std::bad_alloc&) {
        fail_all("out of memory");
      } catch (const std::exception& e) {
        // Nothing may leave the engine thread: every request in flight ends with it.
        fail_all(e.what());
      }
    }
    publish();
  }
  publish();
}

}  // namespace llama::server
