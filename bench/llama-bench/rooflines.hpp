// What this machine allows: memory read bandwidth (a streaming read over a
// buffer larger than the last-level cache) and the sgemm rate (OpenBLAS).
#pragma once

#include <cstdint>
#include <string>

namespace llama::bench {

struct Roofline {
  int threads = 0;
  double bandwidth_gbps = 0;         // best pass, 1e9 bytes/s
  double bandwidth_median_gbps = 0;  // median pass
  int64_t bandwidth_bytes = 0;       // buffer size
  double sgemm_gflops = 0;           // best product, 1e9 FLOP/s
  double sgemm_median_gflops = 0;
  int64_t sgemm_n = 0;
};

// Reads a buffer of `bytes` with `threads` threads (each summing its slice
// with AVX-512 when the CPU has it), `passes` times after one warm pass.
void measure_bandwidth(Roofline& r, int threads, int64_t bytes, int passes);

// C = A B for n x n f32 matrices through OpenBLAS with `threads` threads,
// `reps` times after one warm product.
void measure_sgemm(Roofline& r, int threads, int64_t n, int reps);

// OpenBLAS's kernel family in use (e.g. "Cooperlake").
std::string openblas_core_name();

}  // namespace llama::bench
