// Best-fit arena planning: given buffers with sizes and lifetimes (inclusive
// instruction ranges), assign byte offsets in one arena so that buffers alive
// at the same time never share a byte. Greedy by size, each buffer into the
// smallest gap between already placed, time-overlapping buffers that fits (in
// the spirit of TensorFlow Lite's arena planner).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace llama::graph {

inline constexpr size_t kArenaAlignment = 64;  // bytes: one cache line, one AVX-512 vector

struct BufferRequest {
  size_t bytes = 0;
  int64_t first = 0;  // first instruction at which the buffer is alive
  int64_t last = 0;   // last instruction at which it is alive (inclusive)
};

struct ArenaLayout {
  std::vector<size_t> offsets;  // bytes, one per request, multiples of kArenaAlignment
  size_t arena_bytes = 0;
};

bool lifetimes_overlap(const BufferRequest& a, const BufferRequest& b);

ArenaLayout plan_arena(const std::vector<BufferRequest>& requests);

}  // namespace llama::graph
