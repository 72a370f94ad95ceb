// Decode product rates: the weights and the quantized input are made once,
// outside the timed loop, so the rate is the kernel's alone (a decode step
// quantizes each input once for several matrices). Several threads run side
// by side on their own rows, each phase started at a barrier, so their rates
// add up to what the memory gives them together.
#include "kernel_rates.hpp"

#include <algorithm>
#include <barrier>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <ctime>
#include <exception>
#include <span>
#include <string>
#include <thread>

#include "llama/error.hpp"
#include "llama/kernels/dispatch/product_table.hpp"
#include "llama/kernels/numbers/gguf_blocks.hpp"
#include "llama/kernels/numbers/legacy_blocks.hpp"
#include "llama/kernels/numbers/low_kquant_blocks.hpp"

namespace llama::bench {
namespace {

uint64_t next(uint64_t& s) {  // xorshift64*: fast enough for 512 MiB of weights
  s ^= s >> 12;
  s ^= s << 25;
  s ^= s >> 27;
  return s * 2685821657736338717ull;
}

// Byte offsets of the f16 fields in one block, from the library's block layouts.
std::vector<int64_t> f16_offsets(DType dtype) {
  switch (dtype) {
    case DType::block_q8_0:
      return {offsetof(BlockQ8_0, d)};
    case DType::q4_0:
      return {offsetof(BlockQ4_0, d)};
    case DType::q5_0:
      return {offsetof(BlockQ5_0, d)};
    case DType::q4_1:
      return {offsetof(BlockQ4_1, d), offsetof(BlockQ4_1, m)};
    case DType::q5_1:
      return {offsetof(BlockQ5_1, d), offsetof(BlockQ5_1, m)};
    case DType::q4_k:
      return {offsetof(BlockQ4_K, d), offsetof(BlockQ4_K, dmin)};
    case DType::q5_k:
      return {offsetof(BlockQ5_K, d), offsetof(BlockQ5_K, dmin)};
    case DType::q2_k:
      return {offsetof(BlockQ2_K, d), offsetof(BlockQ2_K, dmin)};
    case DType::q3_k:
      return {offsetof(BlockQ3_K, d)};
    case DType::q6_k:
      return {offsetof(BlockQ6_K, d)};
    default:
      return {};
  }
}

double cpu_seconds() {  // this thread's CPU time
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// Sums the buffer as 64-bit words in four independent chains: the compiler
// vectorizes it, far faster than DRAM, so its rate is the memory's.
uint64_t read_words(std::span<const std::byte> data) {
  uint64_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
  size_t i = 0;
  for (; i + 32 <= data.size(); i += 32) {
    uint64_t w[4];
    std::memcpy(w, data.data() + i, sizeof w);
    a0 += w[0];
    a1 += w[1];
    a2 += w[2];
    a3 += w[3];
  }
  return a0 + a1 + a2 + a3;
}

// Calls fn until `seconds` of CPU time pass (at least once); bytes per call
// over that time, in 1e9 bytes/s. The clock is read once per 8 MiB of calls:
// a thread's CPU clock is a system call (about a microsecond under a
// hypervisor), a tenth of a call on an L2-sized matrix if read every time.
template <typename Fn>
double rate(double seconds, double bytes, Fn fn) {
  const auto per_read = static_cast<int64_t>(std::max(1.0, double{8 << 20} / bytes));
  int64_t calls = 0;
  const double t0 = cpu_seconds();
  double elapsed = 0;
  do {
    for (int64_t i = 0; i < per_read; ++i) fn();
    calls += per_read;
    elapsed = cpu_seconds() - t0;
  } while (elapsed < seconds);
  return bytes * static_cast<double>(calls) / std::max(elapsed, 1e-9) / 1e9;
}

void put16(std::byte* p, uint16_t v) { std::memcpy(p, &v, sizeof v); }

}  // namespace

std::vector<std::byte> random_weights(DType dtype, int64_t rows, int64_t cols, uint64_t seed) {
  const DTypeInfo& info = dtype_info(dtype);
  if (dtype == DType::f32 || dtype == DType::q8_0) {
    throw Error(std::string("kernel rates: no random weights for ") + to_string(dtype));
  }
  const int64_t blocks = rows * cols / info.block_values;
  std::vector<std::byte> data(
      static_cast<size_t>(blocks * info.block_bytes));  // dtype [rows, cols]
  uint64_t s = seed | 1;
  for (size_t i = 0; i + 8 <= data.size(); i += 8) {
    const uint64_t r = next(s);
    std::memcpy(data.data() + i, &r, 8);
  }
  if (dtype == DType::f16 || dtype == DType::bf16) {
    // Sign and low mantissa bits random, exponent fixed: |v| in [0.125, 0.25).
    const uint16_t keep = dtype == DType::f16 ? 0x83FF : 0x807F;
    const uint16_t exponent = dtype == DType::f16 ? 0x3000 : 0x3E00;
    for (size_t i = 0; i + 2 <= data.size(); i += 2) {
      uint16_t v;
      std::memcpy(&v, data.data() + i, 2);
      put16(data.data() + i, static_cast<uint16_t>((v & keep) | exponent));
    }
    return data;
  }
  const std::vector<int64_t> offsets = f16_offsets(dtype);
  if (offsets.empty())
    throw Error(std::string("kernel rates: unknown block layout of ") + to_string(dtype));
  for (int64_t b = 0; b < blocks; ++b) {
    for (int64_t off : offsets) {
      // f16 in [2^-7, 2^-6): a scale as small as trained weights' scales.
      const auto mantissa = static_cast<uint16_t>(next(s) & 0x3FF);
      put16(data.data() + b * info.block_bytes + off, static_cast<uint16_t>(0x2000 | mantissa));
    }
  }
  return data;
}

Rates measure_decode(DType dtype, int64_t cols, int64_t bytes, KernelSet kernel, double seconds,
                     int repeats, int threads) {
  const DTypeInfo& info = dtype_info(dtype);
  if (cols % info.block_values != 0) {
    throw Error("kernel rates: cols " + std::to_string(cols) + " is not a multiple of " +
                to_string(dtype) + "'s block of " + std::to_string(info.block_values));
  }
  const int64_t row_bytes = cols / info.block_values * info.block_bytes;
  if (threads < 1) throw Error("kernel rates: threads must be at least 1");
  const int64_t rows = std::max<int64_t>(threads, bytes / row_bytes);
  const std::vector<std::byte> data = random_weights(dtype, rows, cols, 0x9E3779B97F4A7C15ull);
  const Tensor w = Tensor::view("w", dtype, {rows, cols}, data);

  std::vector<float> x(static_cast<size_t>(cols));  // f32 [cols]
  uint64_t s = 12345;
  for (float& v : x) v = static_cast<float>(next(s) >> 40) / static_cast<float>(1 << 24) * 2 - 1;
  const InputFormat f = input_format(w);
  std::vector<int8_t> values(f.quantized() ? x.size() : 0);  // i8 [cols]
  std::vector<float> scales(f.quantized() ? x.size() / static_cast<size_t>(f.group_size)
                                          : 0);  // f32 [cols / group_size]
  ProductInput in;
  if (f.quantized()) {
    quantize_input(f, x, values, scales);
    in.q8 = Q8View(values, scales, f.group_size);
  } else {
    in.f32 = x;
  }
  std::vector<float> out(static_cast<size_t>(rows));  // f32 [rows]

  matvec_rows(out, w, in, 0, rows, kernel);  // warm: pages touched, caches filled
  uint64_t sink = read_words(data);

  // Thread k: rows [k * rows / threads, (k + 1) * rows / threads) in whole
  // 16-row groups, as the backends split a product; its read covers its own
  // rows' bytes. A thread that fails drops out of the barrier, so the others
  // finish; its error is thrown once all have joined.
  const int64_t unit = rows >= 16 * threads ? 16 : 1;
  std::vector<std::vector<double>> product(static_cast<size_t>(threads));
  std::vector<std::vector<double>> reads(static_cast<size_t>(threads));
  std::vector<uint64_t> sinks(static_cast<size_t>(threads));
  std::vector<std::exception_ptr> errors(static_cast<size_t>(threads));
  std::barrier phase(threads);
  const auto work = [&](int k) {
    const auto at = [&](int j) { return j == threads ? rows : rows * j / threads / unit * unit; };
    const int64_t r0 = at(k), r1 = at(k + 1);
    const std::span<float> y(out.data() + r0, static_cast<size_t>(r1 - r0));
    const std::span<const std::byte> mine(data.data() + r0 * row_bytes,
                                          static_cast<size_t>((r1 - r0) * row_bytes));
    const auto bytes_per_call = static_cast<double>(mine.size());
    uint64_t& mine_sink = sinks[static_cast<size_t>(k)];
    try {
      for (int rep = 0; rep < repeats; ++rep) {
        // Product then read, each repeat: both see the same load on a shared machine.
        phase.arrive_and_wait();
        product[static_cast<size_t>(k)].push_back(
            rate(seconds, bytes_per_call, [&] { matvec_rows(y, w, in, r0, r1, kernel); }));
        phase.arrive_and_wait();
        reads[static_cast<size_t>(k)].push_back(
            rate(seconds, bytes_per_call, [&] { mine_sink += read_words(mine); }));
      }
    } catch (...) {
      errors[static_cast<size_t>(k)] = std::current_exception();
      phase.arrive_and_drop();
    }
  };
  std::vector<std::jthread> others;
  try {
    for (int k = 1; k < threads; ++k) others.emplace_back(work, k);
  } catch (...) {
    // The threads never started, and this one, leave the barrier to those running.
    for (auto k = static_cast<int>(others.size()) + 1; k < threads; ++k) phase.arrive_and_drop();
    phase.arrive_and_drop();
    throw;  // `others` join as they go out of scope
  }
  work(0);
  others.clear();  // joined

  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }

  Rates r;
  for (int rep = 0; rep < repeats; ++rep) {
    double p = 0, q = 0;
    for (int k = 0; k < threads; ++k) {
      p += product[static_cast<size_t>(k)][static_cast<size_t>(rep)];
      q += reads[static_cast<size_t>(k)][static_cast<size_t>(rep)];
    }
    r.product_gbps.push_back(p);
    r.read_gbps.push_back(q);
  }
  for (uint64_t v : sinks) sink += v;
  // Kept observable so the reads are not optimized away.
  if (sink == 1) out[0] += 0.0f;
  if (!std::isfinite(out[0])) throw Error("kernel rates: the product is not finite");
  return r;
}

}  // namespace llama::bench
