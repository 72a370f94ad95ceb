// libFuzzer target: Checkpoint::parse on arbitrary bytes (header, tensor table,
// file-size checks); anything it accepts must lie inside the bytes and run a
// forward pass on the reference backend.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>

#include "fuzz_check.hpp"
#include "heap_meter.hpp"
#include "llama/error.hpp"
#include "llama/formats/llama2c_checkpoint.hpp"
#include "llama/memory_budget.hpp"
#include "llama/registry.hpp"

namespace {

// Keeps each run small: forward passes only on models whose run state is modest.
constexpr int64_t kMaxRunStateBytes = int64_t{64} << 20;

// `view` lies inside the bytes, after the legacy header; every byte is read so
// ASan checks it.
template <typename T>
void check_view(std::span<const T> view, const std::byte* base, size_t size) {
  if (view.empty()) return;
  const auto* begin = reinterpret_cast<const std::byte*>(view.data());
  FUZZ_CHECK(begin >= base + llama::Checkpoint::kHeaderBytes && begin <= base + size,
             "tensor view starts outside the bytes");
  FUZZ_CHECK(view.size_bytes() <= static_cast<size_t>(base + size - begin),
             "tensor view extends past the bytes");
  volatile T sink = 0;
  for (T v : view) sink = static_cast<T>(sink + v);
}

void check_tensors(const llama::Checkpoint& ck, const std::byte* base, size_t size) {
  for (const llama::TensorInfo& t : ck.tensors()) {
    int64_t count = 1;
    for (int64_t d : t.shape) count *= d;
    if (t.quantized.empty()) {  // f32: one view at the tensor's offset
      FUZZ_CHECK(reinterpret_cast<const std::byte*>(t.data.data()) == base + t.offset,
                 "tensor view does not start at its offset");
      FUZZ_CHECK(count == static_cast<int64_t>(t.data.size()), "tensor shape and view disagree");
      check_view(t.data, base, size);
      continue;
    }
    int64_t values = 0;  // Q8_0: int8 values and f32 scales per layer
    for (const llama::QuantizedTensor& q : t.quantized) {
      FUZZ_CHECK(q.group_size > 0 && q.values.size() % static_cast<size_t>(q.group_size) == 0 &&
                     q.scales.size() == q.values.size() / static_cast<size_t>(q.group_size),
                 "Q8_0 values and scales disagree");
      check_view(q.values, base, size);
      check_view(q.scales, base, size);
      values += static_cast<int64_t>(q.values.size());
    }
    FUZZ_CHECK(values == count, "Q8_0 tensor shape and views disagree");
  }
  FUZZ_CHECK(ck.weight_bytes() <= ck.file_size(), "weights larger than the file");
}

void run_forward(const llama::Checkpoint& ck) {
  const llama::Config& c = ck.config();
  if (llama::run_state_bytes(c) > kMaxRunStateBytes) return;
  auto backend = llama::BackendRegistry::instance().create("reference");
  backend->prepare(ck.model());
  for (int64_t pos = 0; pos < std::min<int64_t>(c.seq_len, 2); ++pos) {
    const auto logits = backend->forward(static_cast<int32_t>(c.vocab_size - 1), pos);
    FUZZ_CHECK(static_cast<int64_t>(logits.size()) == c.vocab_size, "logits size");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // An exact-size heap copy: 16-byte aligned, and ASan's redzone starts right after it.
  auto bytes = std::make_unique<std::byte[]>(size);
  if (size > 0) std::memcpy(bytes.get(), data, size);
  try {
    const llama::Checkpoint ck = [&] {
      // Every size in the header is checked against the bytes before a view or a
      // layer is allocated for it: the parsed model is a small multiple of the input.
      const fuzz::HeapMeter meter(fuzz::kParseHeapBound + fuzz::kParseHeapPerByte * size,
                                  "Checkpoint::parse");
      return llama::Checkpoint::parse({bytes.get(), size}, "fuzz.bin", nullptr);
    }();
    check_tensors(ck, bytes.get(), size);
    run_forward(ck);
  } catch (const llama::Error& e) {
    FUZZ_CHECK(std::strncmp(e.what(), "fuzz.bin: ", 10) == 0, "error does not name the file");
  }
  return 0;
}
