// BatchGenerator's scheduling: which sequence a request takes (the free one whose
// cache shares the longest prefix with its prompt), the queue, and what each
// step() runs: every decoding request's token first, so decoding never waits behind
// a prompt, then prompt chunks, oldest request first, within the token budget.
// What a request does with its tokens and logits is runtime/batch_request.cpp's.
#include "llama/batch_generator.hpp"

#include <algorithm>
#include <deque>

#include "llama/error.hpp"
#include "runtime/batch_request.hpp"

namespace llama {
namespace {

int64_t common_prefix(std::span<const int32_t> a, std::span<const int32_t> b) {
  const auto [ia, ib] = std::mismatch(a.begin(), a.end(), b.begin(), b.end());
  return static_cast<int64_t>(ia - a.begin());
}

// What one run of a step is for.
struct Slot {
  batch::Request* request;
  bool decode;  // its pending token, else `tokens` prompt tokens
  int64_t tokens;
};

}  // namespace

struct BatchGenerator::Impl {
  InferenceBackend& backend;
  const Config config;
  const Tokenizer& tokenizer;
  BatchGeneratorOptions options;
  int64_t context = 0;  // positions each sequence holds
  int32_t sequences = 0;
  std::vector<float> scratch;  // f32 [vocab_size]: the logits a sampler overwrites

  // Per sequence: the request holding it (null: free), the tokens its cache holds
  // (i32 [positions]), and when it was last freed (ties of prefix reuse go to the
  // one free the longest, keeping recent caches for their likely followers).
  std::vector<batch::Request*> owner;
  std::vector<std::vector<int32_t>> held;
  std::vector<uint64_t> freed_at;
  uint64_t tick = 0;

  std::vector<std::unique_ptr<batch::Request>> active;  // holding a sequence, oldest first
  std::deque<std::unique_ptr<batch::Request>> queue;    // waiting, oldest first
  uint64_t next_id = 1;
  bool in_step = false;

  std::vector<SequenceRun> runs;  // the step's runs, decoding first
  std::vector<Slot> slots;        // [runs.size()]

  Impl(InferenceBackend& b, const Config& c, const Tokenizer& t, const BatchGeneratorOptions& o)
      : backend(b), config(c), tokenizer(t), options(o) {}

  int64_t free_sequences() const { return std::count(owner.begin(), owner.end(), nullptr); }

  void release(int32_t sequence) {
    owner[static_cast<size_t>(sequence)] = nullptr;
    freed_at[static_cast<size_t>(sequence)] = ++tick;
  }

  // Gives waiting requests free sequences, oldest request first.
  void admit_waiting() {
    while (!queue.empty()) {
      const std::span<const int32_t> prompt = queue.front()->prompt();
      int32_t best = -1;
      int64_t best_common = -1;
      for (int32_t s = 0; s < sequences; ++s) {
        const auto i = static_cast<size_t>(s);
        if (owner[i]) continue;
        const int64_t common = common_prefix(held[i], prompt);
        if (common > best_common ||
            (common == best_common && freed_at[i] < freed_at[static_cast<size_t>(best)])) {
          best = s;
          best_common = common;
        }
      }
      if (best < 0) return;
      std::unique_ptr<batch::Request> r = std::move(queue.front());
      queue.pop_front();
      batch::Request* request = r.get();
      owner[static_cast<size_t>(best)] = request;
      active.push_back(std::move(r));
      // A whole prompt in the cache runs its last token again, for its logits.
      request->start(best, std::min(best_common, request->max_reuse()));
    }
  }

  void sweep() {
    std::erase_if(active, [](const auto& r) { return r->finished(); });
  }

  // Decoding requests' tokens, then prompt chunks within the budget.
  void plan_step() {
    runs.clear();
    slots.clear();
    int64_t used = 0;
    for (const auto& r : active) {
      if (r->finished() || !r->decoding()) continue;
      runs.push_back({r->sequence(), r->position(), r->pending(), RunLogits::last});
      slots.push_back({r.get(), true, 1});
      ++used;
    }
    int64_t room = std::max<int64_t>(options.token_budget - used, 1);
    for (const auto& r : active) {
      if (room == 0) break;
      if (r->finished() || r->decoding() || r->prompt_left() == 0) continue;
      const int64_t n = std::min(room, r->prompt_left());
      // Logits only for a prompt's last chunk: the others feed the cache alone.
      const RunLogits logits = n == r->prompt_left() ? RunLogits::last : RunLogits::none;
      runs.push_back({r->sequence(), r->position(), r->prompt_chunk(n), logits});
      slots.push_back({r.get(), false, n});
      room -= n;
    }
  }

  // The step's backend call: f32 [rows, vocab_size], one row per run asking for one.
  std::span<const float> call() {
    if (options.calls == StepCalls::forward_runs) return backend.forward_runs(runs);
    const SequenceRun& r = runs.front();  // sequences == 1: one run
    if (slots.front().decode) return backend.forward(r.tokens.front(), r.start_pos);
    return backend.forward_batch(r.tokens, r.start_pos);
  }

  bool step() {
    if (in_step) throw Error("BatchGenerator::step called from one of its own callbacks");
    sweep();
    admit_waiting();
    plan_step();
    if (runs.empty()) return !active.empty() || !queue.empty();

    struct InStep {
      bool& flag;
      explicit InStep(bool& f) : flag(f) { flag = true; }
      ~InStep() { flag = false; }
    } guard(in_step);
    const auto t0 = batch::Clock::now();
    const std::span<const float> logits = call();
    const double ms = std::chrono::duration<double, std::milli>(batch::Clock::now() - t0).count();
    // The caches now hold these tokens, from each run's start on.
    for (const SequenceRun& r : runs) {
      std::vector<int32_t>& h = held[static_cast<size_t>(r.sequence)];
      h.resize(static_cast<size_t>(r.start_pos));
      h.insert(h.end(), r.tokens.begin(), r.tokens.end());
    }
    const auto vocab = static_cast<size_t>(config.vocab_size);
    size_t row = 0;
    for (size_t i = 0; i < runs.size(); ++i) {
      std::span<const float> mine;
      if (runs[i].logits != RunLogits::none) mine = logits.subspan(vocab * row++, vocab);
      batch::Request& r = *slots[i].request;
      if (r.finished()) continue;  // cancelled by an earlier request's callback
      if (slots[i].decode) {
        r.decode_ran(mine);
      } else {
        r.prompt_ran(slots[i].tokens, ms, mine);
      }
    }
    sweep();
    admit_waiting();
    return !active.empty() || !queue.empty();
  }
};

BatchGenerator::BatchGenerator(InferenceBackend& backend, const Config& config,
                               const Tokenizer& tokenizer, const BatchGeneratorOptions& options)
    : impl_(std::make_unique<Impl>(backend, config, tokenizer, options)) {
  Impl& g = *impl_;
  const BatchGeneratorOptions& o = options;
  const bool single = o.calls == StepCalls::forward;
  const int32_t have = single ? 1 : backend.sequences();
  if (o.sequences < 0 || o.sequences > have) {
    throw Error("the batch generator asks for " + std::to_string(o.sequences) + " sequences; " +
                (single ? std::string("forward calls run 1")
                        : "the backend holds " + std::to_string(have)));
  }
  if (o.context < 0 || o.context > config.seq_len) {
    throw Error("the context of " + std::to_string(o.context) +
                " positions is larger than the model's (seq_len " + std::to_string(config.seq_len) +
                ")");
  }
  if (o.token_budget < 1) {
    throw Error("token_budget must be >= 1, got " + std::to_string(o.token_budget));
  }
  if (o.max_queue < 0) throw Error("max_queue must be >= 0, got " + std::to_string(o.max_queue));
  // A model's embedding may have rows no token uses (padded vocabularies); a
  // token it cannot embed is an error.
  if (tokenizer.vocab_size() > config.vocab_size) {
    throw Error("tokenizer has " + std::to_string(tokenizer.vocab_size()) +
                " entries, more than the model's vocab_size " + std::to_string(config.vocab_size));
  }
  g.sequences = o.sequences == 0 ? have : o.sequences;
  g.context = o.context == 0 ? config.seq_len : o.context;
  g.scratch.resize(static_cast<size_t>(config.vocab_size));
  g.owner.assign(static_cast<size_t>(g.sequences), nullptr);
  g.held.resize(static_cast<size_t>(g.sequences));
  g.freed_at.assign(static_cast<size_t>(g.sequences), 0);
}

BatchGenerator::~BatchGenerator() = default;

uint64_t BatchGenerator::add(GenerationRequest request) {
  Impl& g = *impl_;
  batch::check_request(request, g.config, g.context);
  const auto waiting = static_cast<int64_t>(g.queue.size());
  if ((waiting > 0 || g.free_sequences() == 0) && waiting >= g.options.max_queue) {
    throw Error("the queue is full (max_queue " + std::to_string(g.options.max_queue) +
                "): every sequence is busy");
  }
  const uint64_t id = g.next_id++;
  g.queue.push_back(
      std::make_unique<batch::Request>(id, std::move(request), g.config, g.tokenizer, g.context,
                                       g.scratch, [&g](int32_t sequence) { g.release(sequence); }));
  g.admit_waiting();
  return id;
}

bool BatchGenerator::cancel(uint64_t id) {
  Impl& g = *impl_;
  for (auto it = g.queue.begin(); it != g.queue.end(); ++it) {
    if ((*it)->id() != id) continue;
    const std::unique_ptr<batch::Request> r = std::move(*it);
    g.queue.erase(it);
    r->cancel();
    return true;
  }
  const auto it = std::find_if(g.active.begin(), g.active.end(),
                               [id](const auto& r) { return r->id() == id && !r->finished(); });
  if (it == g.active.end()) return false;
  // Not erased here: a step may be running (cancel from a callback); the next
  // step() sweeps it. on_finish may add requests, so no iterator outlives this.
  (*it)->cancel();
  g.admit_waiting();  // its sequence goes to the oldest waiting request
  return true;
}

bool BatchGenerator::step() { return impl_->step(); }

void BatchGenerator::run() {
  while (step()) {
  }
}

int32_t BatchGenerator::sequences() const { return impl_->sequences; }

int64_t BatchGenerator::running() const {
  return std::count_if(impl_->active.begin(), impl_->active.end(),
                       [](const auto& r) { return !r->finished(); });
}

std::vector<SequenceState> BatchGenerator::sequence_states() const {
  std::vector<SequenceState> out(impl_->owner.size());
  for (size_t i = 0; i < out.size(); ++i) {
    out[i].request = impl_->owner[i] ? impl_->owner[i]->id() : 0;
    out[i].generated = impl_->owner[i] ? impl_->owner[i]->generated() : 0;
    out[i].cached = static_cast<int64_t>(impl_->held[i].size());
  }
  return out;
}

int64_t BatchGenerator::queued() const { return static_cast<int64_t>(impl_->queue.size()); }

}  // namespace llama
