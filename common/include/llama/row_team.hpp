// RowTeam: the threads that split decode's matrix-vector products, with a
// hand-off and a join of about a microsecond.
//
// Why not a oneTBB parallel_for per product: a decode token is about 100
// products of 1-12 MB each (340M shape), and on an Intel Xeon (model 207,
// KVM, 2 threads) the oneTBB worker started each one 9 us late (quiet
// machine) to 450 us late (another build running: the sleeping worker was
// woken late or not at all, and the caller did nearly all the rows). Here the
// workers spin between the products of one forward pass (a Session) and
// sleep outside it.
//
// Split: the chunks [0, n) are cut into one contiguous share per thread; each
// thread takes its share's chunks from the front, in order (so a kernel's
// prefetch stream runs on into its next chunk), and when its share is done
// takes chunks from the back of the others'. A thread that never arrives (a
// worker descheduled) costs nothing: the others take its share. Results may
// not depend on which thread ran a chunk; that is the body's contract.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>
#include <thread>
#include <vector>

namespace llama {

class RowTeam {
 public:
  // `threads` >= 1 counts the caller: threads - 1 workers are started.
  explicit RowTeam(int threads);
  ~RowTeam();
  RowTeam(const RowTeam&) = delete;
  RowTeam& operator=(const RowTeam&) = delete;

  int threads() const { return threads_; }
  // Whether a Session is open (the caller's view).
  bool in_session() const { return active_.load(std::memory_order_relaxed) != 0; }

  // While a Session lives the workers spin waiting for run(); outside one they
  // sleep. One forward pass is one session (not nested, one caller).
  class Session {
   public:
    explicit Session(RowTeam& team);
    ~Session();
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;

   private:
    RowTeam& team_;
  };

  // Calls body(begin, end) over disjoint ranges covering [0, chunks), on the
  // caller and the workers, and returns when every call has returned. An
  // exception from a body is rethrown here (the first one; the rest of the
  // chunks still run).
  template <typename Body>
  void run(int64_t chunks, const Body& body) {
    const Job job{chunks, &call<Body>, &body};
    dispatch(job);
  }

  // Chunks one run() may take (the claim words' field width).
  static constexpr int64_t kMaxChunks = (int64_t{1} << 16) - 1;
  // Weight bytes per chunk of a decode product: small enough that each
  // thread's last chunk ends within a few microseconds of the other's (this
  // Intel Xeon streams about 14 GB/s per thread: 2.3 us a chunk), large
  // enough that claiming one (a compare-exchange) is lost in it.
  static constexpr int64_t kProductChunkBytes = int64_t{32} << 10;

 private:
  struct Job {
    int64_t chunks;
    void (*fn)(const void*, int64_t, int64_t);
    const void* body;
  };
  template <typename Body>
  static void call(const void* body, int64_t begin, int64_t end) {
    (*static_cast<const Body*>(body))(begin, end);
  }
  // One share's claim word: the job's generation (32 bits), then the front
  // and back (16 bits each) of its unclaimed chunks. A stale claim (a thread
  // still holding an old generation) fails its compare-exchange.
  struct alignas(64) Share {
    std::atomic<uint64_t> word{0};
  };

  void dispatch(const Job& job);
  void work(uint32_t gen, const Job* job, int self);
  bool claim(int share, uint32_t gen, bool front, int64_t& chunk);
  void ring();
  void worker(int self);

  int threads_;
  std::unique_ptr<Share[]> shares_;              // [threads_]
  alignas(64) std::atomic<uint32_t> gen_{0};     // the current job's generation
  std::atomic<const Job*> job_{nullptr};         // the current job (valid while unfinished)
  alignas(64) std::atomic<int64_t> done_{0};     // chunks of the current job finished
  std::atomic<bool> joiner_waits_{false};        // the caller sleeps on done_
  alignas(64) std::atomic<uint32_t> active_{0};  // 1 inside a Session
  std::atomic<uint32_t> sleepers_{0};            // workers asleep or going to sleep
  std::atomic<uint32_t> bell_{0};                // what sleeping workers wait on
  std::atomic<bool> stop_{false};
  int64_t skip_ = 0;          // runs left on the caller alone after a stall
  int64_t backoff_ = 128;     // skip_ after the next stall
  std::exception_ptr error_;  // the current job's first exception
  std::atomic<bool> failed_{false};
  std::vector<std::thread> workers_;
};

}  // namespace llama
