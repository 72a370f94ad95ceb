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

#include "fuzz_check.hpp"
#include "llama/checkpoint.hpp"
#include "llama/error.hpp"
#include "llama/memory_budget.hpp"
#include "llama/registry.hpp"

namespace {

// Keeps each run small: forward passes only on models whose run state is modest.
constexpr int64_t kMaxRunStateBytes = int64_t{64} << 20;

void check_tensors(const llama::Checkpoint& ck, const std::byte* base, size_t size) {
  for (const llama::TensorInfo& t : ck.tensors()) {
    const auto* begin = reinterpret_cast<const std::byte*>(t.data.data());
    FUZZ_CHECK(begin == base + t.offset, "tensor view does not start at its offset");
    FUZZ_CHECK(t.offset >= llama::Checkpoint::kHeaderBytes, "tensor overlaps the header");
    FUZZ_CHECK(t.data.size_bytes() <= size - static_cast<size_t>(t.offset),
               "tensor extends past the bytes");
    int64_t count = 1;
    for (int64_t d : t.shape) count *= d;
    FUZZ_CHECK(count == static_cast<int64_t>(t.data.size()), "tensor shape and view disagree");
    volatile float sink = 0;  // touch every value so ASan checks each byte
    for (float v : t.data) sink = sink + v;
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
    const llama::Checkpoint ck = llama::Checkpoint::parse({bytes.get(), size}, "fuzz.bin", nullptr);
    check_tensors(ck, bytes.get(), size);
    run_forward(ck);
  } catch (const llama::Error& e) {
    FUZZ_CHECK(std::strncmp(e.what(), "fuzz.bin: ", 10) == 0, "error does not name the file");
  }
  return 0;
}
