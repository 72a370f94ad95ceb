// libFuzzer target: SafetensorsFile::parse on arbitrary bytes (the header
// length, the JSON header, every tensor's offsets). A file it accepts must
// describe views that lie inside the bytes, agree with dtype x shape and cover
// the data back to back; every byte of every view is read so ASan checks it.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>

#include "fuzz_check.hpp"
#include "heap_meter.hpp"
#include "llama/error.hpp"
#include "llama/formats/safetensors.hpp"

namespace {

void check_file(const llama::SafetensorsFile& f, const std::byte* base, size_t size) {
  FUZZ_CHECK(f.file_size() == static_cast<int64_t>(size), "file size");
  FUZZ_CHECK(f.header_bytes() >= 0 && 8 + f.header_bytes() <= f.file_size(),
             "header inside the file");
  int64_t at = 8 + f.header_bytes();
  for (const llama::SafetensorsTensor& t : f.tensors()) {
    FUZZ_CHECK(t.shape.size() <= llama::SafetensorsFile::kMaxRank, "rank above the limit");
    FUZZ_CHECK(t.offset == at, "tensors do not follow each other");
    FUZZ_CHECK(
        reinterpret_cast<const std::byte*>(t.bytes.data()) == base + t.offset || t.bytes.empty(),
        "view does not start at the tensor's offset");
    FUZZ_CHECK(static_cast<int64_t>(t.bytes.size()) == t.elements() * llama::element_bytes(t.dtype),
               "view size disagrees with dtype x shape");
    FUZZ_CHECK(t.offset + static_cast<int64_t>(t.bytes.size()) <= static_cast<int64_t>(size),
               "view extends past the bytes");
    FUZZ_CHECK(f.find(t.name) == &t, "find does not return the tensor");
    volatile uint8_t sink = 0;
    for (std::byte b : t.bytes) sink = static_cast<uint8_t>(sink ^ static_cast<uint8_t>(b));
    at += static_cast<int64_t>(t.bytes.size());
  }
  FUZZ_CHECK(at == static_cast<int64_t>(size), "tensors do not cover the data");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // An exact-size heap copy, so ASan's redzone starts right after it.
  auto bytes = std::make_unique<std::byte[]>(size);
  if (size > 0) std::memcpy(bytes.get(), data, size);
  try {
    const auto f = [&] {
      // The tensor table is parsed from the header's bytes, never sized ahead of them.
      const fuzz::HeapMeter meter(fuzz::kParseHeapBound + fuzz::kParseHeapPerByte * size,
                                  "SafetensorsFile::parse");
      return llama::SafetensorsFile::parse({bytes.get(), size}, "fuzz.safetensors", nullptr);
    }();
    check_file(f, bytes.get(), size);
  } catch (const llama::Error& e) {
    FUZZ_CHECK(std::strncmp(e.what(), "fuzz.safetensors: ", 18) == 0,
               "error does not name the file");
  }
  return 0;
}
