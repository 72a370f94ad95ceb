// RowTeam (llama/row_team.hpp): the claim words, the workers' spin-then-sleep
// loop and the caller's hand-off and join.
#include "llama/row_team.hpp"

#include <algorithm>
#include <chrono>
#include <string>

#include "llama/error.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace llama {
namespace {

using Clock = std::chrono::steady_clock;

// How long a worker spins with no job before it sleeps: inside a session
// long enough to cover the single-threaded work between two products
// (rmsnorm, rope, attention on a short cache: tens of microseconds), outside
// one long enough to cover the gap between two tokens' forward passes.
constexpr auto kSpinInSession = std::chrono::microseconds(2000);
constexpr auto kSpinOutside = std::chrono::microseconds(200);
// How long the caller spins at a join before it sleeps (a chunk takes 2-3 us).
constexpr auto kJoinSpin = std::chrono::microseconds(30);
// A join longer than this was a stall (a worker off its core), and the runs
// skipped after one: from about one token's products to a hundred tokens'.
constexpr auto kStall = std::chrono::microseconds(300);
constexpr int64_t kMinBackoff = 128, kMaxBackoff = int64_t{1} << 14;

void relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

uint64_t word(uint32_t gen, int64_t front, int64_t back) {
  return (uint64_t{gen} << 32) | (static_cast<uint64_t>(front) << 16) | static_cast<uint64_t>(back);
}

}  // namespace

RowTeam::RowTeam(int threads) : threads_(threads) {
  if (threads < 1) throw Error("row team: threads must be >= 1, got " + std::to_string(threads));
  shares_ = std::make_unique<Share[]>(static_cast<size_t>(threads));
  workers_.reserve(static_cast<size_t>(threads - 1));
  for (int t = 1; t < threads; ++t) workers_.emplace_back([this, t] { worker(t); });
}

RowTeam::~RowTeam() {
  stop_.store(true, std::memory_order_seq_cst);
  bell_.fetch_add(1, std::memory_order_seq_cst);
  bell_.notify_all();
  for (std::thread& w : workers_) w.join();
}

RowTeam::Session::Session(RowTeam& team) : team_(team) {
  team_.active_.store(1, std::memory_order_seq_cst);
  team_.ring();  // sleeping workers start spinning before the first product
}

RowTeam::Session::~Session() { team_.active_.store(0, std::memory_order_relaxed); }

void RowTeam::ring() {
  if (sleepers_.load(std::memory_order_seq_cst) == 0) return;
  bell_.fetch_add(1, std::memory_order_seq_cst);
  bell_.notify_all();
}

bool RowTeam::claim(int share, uint32_t gen, bool front, int64_t& chunk) {
  std::atomic<uint64_t>& w = shares_[static_cast<size_t>(share)].word;
  uint64_t v = w.load(std::memory_order_acquire);
  while (true) {
    if (static_cast<uint32_t>(v >> 32) != gen) return false;  // a later job's word
    const int64_t f = static_cast<int64_t>((v >> 16) & 0xffff),
                  b = static_cast<int64_t>(v & 0xffff);
    if (f >= b) return false;
    const uint64_t next = front ? word(gen, f + 1, b) : word(gen, f, b - 1);
    if (w.compare_exchange_weak(v, next, std::memory_order_acq_rel, std::memory_order_acquire)) {
      chunk = front ? f : b - 1;
      return true;
    }
  }
}

void RowTeam::work(uint32_t gen, const Job* job, int self) {
  // `job` is read only after a claim of generation `gen` succeeded: until
  // that job's last chunk is done its caller waits, so it is still alive.
  const auto run_chunk = [&](int64_t c) {
    try {
      job->fn(job->body, c, c + 1);
    } catch (...) {
      if (!failed_.exchange(true)) error_ = std::current_exception();
    }
    done_.fetch_add(1, std::memory_order_seq_cst);
    if (joiner_waits_.load(std::memory_order_seq_cst)) done_.notify_all();
  };
  int64_t c = 0;
  while (claim(self, gen, true, c)) run_chunk(c);
  for (int k = 1; k < threads_; ++k) {
    const int other = (self + k) % threads_;
    while (claim(other, gen, false, c)) run_chunk(c);
  }
}

void RowTeam::dispatch(const Job& job) {
  if (job.chunks <= 0) return;
  if (job.chunks > kMaxChunks) {
    throw Error("row team: " + std::to_string(job.chunks) + " chunks in one run, at most " +
                std::to_string(kMaxChunks));
  }
  if (threads_ == 1 || job.chunks == 1 || active_.load(std::memory_order_relaxed) == 0 ||
      skip_ > 0) {
    // No session (the workers may be asleep), or backing off after a stall.
    if (skip_ > 0) --skip_;
    job.fn(job.body, 0, job.chunks);
    return;
  }
  const uint32_t gen = gen_.load(std::memory_order_relaxed) + 1;  // only the caller writes it
  for (int s = 0; s < threads_; ++s) {
    shares_[static_cast<size_t>(s)].word.store(
        word(gen, job.chunks * s / threads_, job.chunks * (s + 1) / threads_),
        std::memory_order_relaxed);
  }
  done_.store(0, std::memory_order_relaxed);
  failed_.store(false, std::memory_order_relaxed);
  error_ = nullptr;
  job_.store(&job, std::memory_order_relaxed);
  gen_.store(gen, std::memory_order_seq_cst);  // publishes the words and the job
  ring();
  work(gen, &job, 0);
  // The join: a worker still on its last chunk. Spin a little; past that the
  // worker was likely descheduled, so sleep and leave this core to it.
  const auto start = Clock::now();
  unsigned spins = 0;
  int64_t done = 0;
  while ((done = done_.load(std::memory_order_acquire)) < job.chunks) {
    relax();
    if (++spins % 64 != 0 || Clock::now() - start < kJoinSpin) continue;
    joiner_waits_.store(true, std::memory_order_seq_cst);
    done = done_.load(std::memory_order_seq_cst);
    if (done < job.chunks) done_.wait(done, std::memory_order_seq_cst);
    joiner_waits_.store(false, std::memory_order_relaxed);
  }
  // A join that waited this long means a worker was descheduled holding a
  // chunk (another process wants its core): run the next runs on this thread
  // alone, twice as many after each stall, so a busy machine costs one stall
  // now and then, not one per product.
  if (Clock::now() - start > kStall) {
    skip_ = backoff_;
    backoff_ = std::min<int64_t>(backoff_ * 2, kMaxBackoff);
  } else if (backoff_ > kMinBackoff) {
    --backoff_;
  }
  if (failed_.load(std::memory_order_relaxed)) std::rethrow_exception(error_);
}

void RowTeam::worker(int self) {
  // 0, not gen_'s value now: a job published before this thread started
  // running is still its to take.
  uint32_t seen = 0;
  Clock::time_point last = Clock::now();
  unsigned spins = 0;
  while (!stop_.load(std::memory_order_relaxed)) {
    const uint32_t gen = gen_.load(std::memory_order_acquire);
    if (gen != seen) {
      seen = gen;
      work(gen, job_.load(std::memory_order_acquire), self);
      last = Clock::now();
      continue;
    }
    relax();
    // The clock every 64 pauses. No sched_yield here: with a lower-priority
    // process on the machine (other builds at nice 10) each yield handed it a
    // time slice and the worker missed the next products (340M bf16 graph
    // 0.67-0.81 of bandwidth with it, old oneTBB 0.79-0.82, same minutes).
    if (++spins % 64 != 0) continue;
    const auto limit = active_.load(std::memory_order_relaxed) ? kSpinInSession : kSpinOutside;
    if (Clock::now() - last < limit) continue;
    // Sleep until a job, a session or the destructor rings (ring() reads
    // sleepers_ after its store, this reads the generation after counting
    // itself: one of the two sees the other).
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
    const uint32_t bell = bell_.load(std::memory_order_seq_cst);
    if (gen_.load(std::memory_order_seq_cst) == seen && !stop_.load(std::memory_order_seq_cst)) {
      bell_.wait(bell, std::memory_order_seq_cst);
    }
    sleepers_.fetch_sub(1, std::memory_order_seq_cst);
    last = Clock::now();
  }
}

}  // namespace llama
