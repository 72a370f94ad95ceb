// Roofline measurements. The bandwidth pass splits the buffer into one
// contiguous slice per thread, first touched by the thread that reads it.
#include "rooflines.hpp"

#include <cblas.h>
#include <immintrin.h>

#include <chrono>
#include <cmath>
#include <thread>
#include <vector>

#include "llama/error.hpp"
#include "llama/kernels/dispatch/cpu_features.hpp"
#include "stats.hpp"

extern "C" {
char* openblas_get_corename();
void openblas_set_num_threads(int);
}

namespace llama::bench {
namespace {

using Clock = std::chrono::steady_clock;

__attribute__((target("avx512f"), noinline)) float sum_avx512(const float* p, size_t n) {
  __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    a0 = _mm512_add_ps(a0, _mm512_loadu_ps(p + i));
    a1 = _mm512_add_ps(a1, _mm512_loadu_ps(p + i + 16));
    a2 = _mm512_add_ps(a2, _mm512_loadu_ps(p + i + 32));
    a3 = _mm512_add_ps(a3, _mm512_loadu_ps(p + i + 48));
  }
  // Stored and summed by hand: GCC 12 warns falsely inside _mm512_reduce_add_ps.
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, _mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
  float s = 0;
  for (float v : lanes) s += v;
  for (; i < n; ++i) s += p[i];
  return s;
}

float sum_portable(const float* p, size_t n) {
  float acc[16] = {};
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    for (size_t j = 0; j < 16; ++j) acc[j] += p[i + j];
  }
  float s = 0;
  for (float a : acc) s += a;
  for (; i < n; ++i) s += p[i];
  return s;
}

float sum(const float* p, size_t n) {
  static const bool avx512 = cpu_features().avx512f && cpu_features().os_zmm;
  return avx512 ? sum_avx512(p, n) : sum_portable(p, n);
}

// Runs fn(t, begin, end) on `threads` threads over [0, n) and returns seconds.
template <typename Fn>
double run_sliced(int threads, size_t n, Fn fn) {
  std::vector<std::thread> pool;
  const auto t0 = Clock::now();
  for (int t = 0; t < threads; ++t) {
    const size_t begin = n * static_cast<size_t>(t) / static_cast<size_t>(threads);
    const size_t end = n * static_cast<size_t>(t + 1) / static_cast<size_t>(threads);
    pool.emplace_back(fn, t, begin, end);
  }
  for (std::thread& th : pool) th.join();
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

void measure_bandwidth(Roofline& r, int threads, int64_t bytes, int passes) {
  const size_t n = static_cast<size_t>(bytes) / sizeof(float);
  std::vector<float> buffer;
  try {
    buffer.resize(n);  // zero-filled here; re-touched below per thread
  } catch (const std::bad_alloc&) {
    throw Error("bandwidth roofline: cannot allocate " + std::to_string(bytes) + " bytes");
  }
  std::vector<float> sums(static_cast<size_t>(threads));
  run_sliced(threads, n, [&](int, size_t b, size_t e) {
    for (size_t i = b; i < e; ++i) buffer[i] = static_cast<float>(i & 7);
  });
  std::vector<double> rates;
  for (int pass = -1; pass < passes; ++pass) {
    const double s = run_sliced(threads, n, [&](int t, size_t b, size_t e) {
      sums[static_cast<size_t>(t)] = sum(buffer.data() + b, e - b);
    });
    if (pass >= 0) rates.push_back(static_cast<double>(n * sizeof(float)) / s / 1e9);
  }
  float total = 0;
  for (float s : sums) total += s;
  if (!std::isfinite(total)) throw Error("bandwidth roofline: the sum is not finite");
  const Summary s = summarize(rates);
  r.threads = threads;
  r.bandwidth_gbps = s.max;
  r.bandwidth_median_gbps = s.median;
  r.bandwidth_bytes = static_cast<int64_t>(n * sizeof(float));
}

void measure_sgemm(Roofline& r, int threads, int64_t n, int reps) {
  const size_t count = static_cast<size_t>(n * n);
  std::vector<float> a(count), b(count), c(count);
  for (size_t i = 0; i < count; ++i) {
    a[i] = static_cast<float>(static_cast<int>(i % 17) - 8) * 0.01f;
    b[i] = static_cast<float>(static_cast<int>(i % 13) - 6) * 0.01f;
  }
  openblas_set_num_threads(threads);
  const auto bn = static_cast<blasint>(n);
  std::vector<double> rates;
  for (int rep = -1; rep < reps; ++rep) {
    const auto t0 = Clock::now();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, bn, bn, bn, 1.0f, a.data(), bn, b.data(),
                bn, 0.0f, c.data(), bn);
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    if (rep >= 0) rates.push_back(2.0 * std::pow(static_cast<double>(n), 3) / s / 1e9);
  }
  if (!std::isfinite(c[count / 2])) throw Error("sgemm roofline: the product is not finite");
  const Summary s = summarize(rates);
  r.threads = threads;
  r.sgemm_gflops = s.max;
  r.sgemm_median_gflops = s.median;
  r.sgemm_n = n;
}

std::string openblas_core_name() {
  const char* name = openblas_get_corename();
  return name != nullptr ? name : "unknown";
}

}  // namespace llama::bench
