// How fast one decode product (matvec_rows through the product table, as the
// backends call it) reads its weights, on one thread or on several sharing
// the rows as the backends do: with the matrix resident in L2 and with a
// matrix set far larger than the last-level cache. Set next to a plain
// streaming read, the two rates say whether a dtype's kernel is bound by
// compute or by memory.
#pragma once

#include <cstdint>
#include <vector>

#include "llama/kernels/dispatch/kernel_set.hpp"
#include "llama/tensor.hpp"

namespace llama::bench {

// Seeded random weights of `dtype` [rows, cols]: random code bytes with every
// f16/bf16 field set to a finite, moderate value (only speed matters here,
// but NaN or huge scales could take slow paths).
std::vector<std::byte> random_weights(DType dtype, int64_t rows, int64_t cols, uint64_t seed);

// Rates in 1e9 bytes per second, one per repeat (on several threads, the sum
// of the threads' rates).
struct Rates {
  std::vector<double> product_gbps;  // weight bytes through matvec_rows
  std::vector<double> read_gbps;     // the same buffer summed as plain 64-bit words
};

// Runs matvec_rows over every row of a random `dtype` matrix of `cols`
// columns and about `bytes` bytes (at least one row per thread) until
// `seconds` of CPU time pass, then a plain read of the same buffer as long,
// `repeats` times after one warm call of each. `threads` threads each take
// an equal slice of whole rows (the backends' split; a slice no larger than
// an L2 stays in its core's) and start each timed phase together. CPU
// time, not wall time: on a shared machine a thread is descheduled at times,
// and that is not the kernel's speed (llama-bench's bandwidth roofline uses
// wall time, so its measure_bandwidth is not reused here).
Rates measure_decode(DType dtype, int64_t cols, int64_t bytes, KernelSet kernel, double seconds,
                     int repeats, int threads = 1);

}  // namespace llama::bench
