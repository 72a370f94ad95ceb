// HeapMeter: a bound on the heap one fuzz input may use. The fuzzer binary that
// links heap_meter.cpp replaces the global operator new/delete; while a HeapMeter
// lives, the bytes live on the heap (taken since it started, less those given
// back) are counted, and the allocation that takes them above the bound aborts
// at once with FUZZ_CHECK's message. So a reader that sizes a container from a
// header before checking it fails in the first run of the input that shows it,
// long before libFuzzer's -rss_limit_mb or -timeout would notice.
#pragma once

#include <cstddef>
#include <cstdint>

namespace fuzz {

// The bound for a parser of n input bytes: what it builds (tensor tables, per-layer
// views, metadata) is a small multiple of the bytes that describe it; a header count
// used before it is checked against the bytes exceeds it at once.
inline constexpr size_t kParseHeapBound = size_t{1} << 20;
inline constexpr size_t kParseHeapPerByte = 64;

// What the replaced operator new counts while a meter is active.
struct HeapCount {
  int64_t live = 0;  // may go negative: memory taken before the meter started, given back
  int64_t peak = 0;
  int64_t bound = 0;
  const char* what = "";
};

class HeapMeter {
 public:
  // `what` names the code measured in the message (a string literal).
  HeapMeter(size_t bound_bytes, const char* what);
  ~HeapMeter();
  HeapMeter(const HeapMeter&) = delete;
  HeapMeter& operator=(const HeapMeter&) = delete;

  // The most bytes live at once so far (above what was live when it started).
  size_t peak() const { return static_cast<size_t>(count_.peak); }

 private:
  HeapCount count_;
  HeapCount* outer_;  // a meter active when this one started, restored after
};

}  // namespace fuzz
