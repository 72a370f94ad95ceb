// How fast one decode product (matvec_rows through the product table, as the
// backends call it) reads its weights on one thread: with the matrix resident
// in L2 and with a matrix set far larger than the last-level cache. Set next
// to a plain streaming read, the two rates say whether a dtype's kernel is
// bound by compute or by memory.
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

// Rates in 1e9 bytes per second, one per repeat.
struct Rates {
  std::vector<double> product_gbps;  // weight bytes through matvec_rows
  std::vector<double> read_gbps;     // the same buffer summed as plain 64-bit words
};

// Runs matvec_rows over every row of a random `dtype` matrix of `cols`
// columns and about `bytes` bytes (at least one row) until `seconds` of this
// thread's CPU time pass, then a plain read of the same buffer as long,
// `repeats` times after one warm call of each. CPU time, not wall time: on a
// shared machine the thread is descheduled at times, and that is not the
// kernel's speed (llama-bench's bandwidth roofline uses wall time, so its
// measure_bandwidth is not reused here).
Rates measure_decode(DType dtype, int64_t cols, int64_t bytes, KernelSet kernel, double seconds,
                     int repeats);

}  // namespace llama::bench
