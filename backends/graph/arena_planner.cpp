// Best-fit arena planner.
#include "arena_planner.hpp"

#include <algorithm>
#include <numeric>

#include "llama/checked_math.hpp"

namespace llama::graph {
namespace {

size_t align_up(size_t n) {
  const auto a = static_cast<int64_t>(kArenaAlignment);
  const int64_t padded = checked_add(static_cast<int64_t>(n), a - 1, "graph arena");
  return static_cast<size_t>(padded / a * a);
}

}  // namespace

bool lifetimes_overlap(const BufferRequest& a, const BufferRequest& b) {
  return a.first <= b.last && b.first <= a.last;
}

ArenaLayout plan_arena(const std::vector<BufferRequest>& requests) {
  const size_t n = requests.size();
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  // Largest first; earlier-born first among equals so the result is deterministic.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (requests[a].bytes != requests[b].bytes) return requests[a].bytes > requests[b].bytes;
    return requests[a].first < requests[b].first;
  });

  ArenaLayout layout;
  layout.offsets.assign(n, 0);
  std::vector<size_t> placed;  // request indices, in placement order
  struct Span {
    size_t begin, end;
  };
  std::vector<Span> busy;
  for (size_t r : order) {
    const size_t need = align_up(requests[r].bytes);
    busy.clear();
    for (size_t p : placed) {
      if (lifetimes_overlap(requests[r], requests[p])) {
        busy.push_back({layout.offsets[p], layout.offsets[p] + align_up(requests[p].bytes)});
      }
    }
    std::sort(busy.begin(), busy.end(), [](const Span& a, const Span& b) {
      return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
    });
    // Walk the gaps between busy spans; keep the smallest that fits.
    size_t best = 0, best_gap = 0, cursor = 0;
    bool found = false;
    for (const Span& s : busy) {
      if (s.begin > cursor) {
        const size_t gap = s.begin - cursor;
        if (gap >= need && (!found || gap < best_gap)) {
          best = cursor;
          best_gap = gap;
          found = true;
        }
      }
      cursor = std::max(cursor, s.end);
    }
    const size_t offset = found ? best : cursor;
    layout.offsets[r] = offset;
    layout.arena_bytes =
        std::max(layout.arena_bytes,
                 static_cast<size_t>(checked_add(static_cast<int64_t>(offset),
                                                 static_cast<int64_t>(need), "graph arena")));
    placed.push_back(r);
  }
  return layout;
}

}  // namespace llama::graph
