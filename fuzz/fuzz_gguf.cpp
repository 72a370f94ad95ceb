// libFuzzer target: gguf::File::parse on arbitrary bytes (header, metadata of
// every value type, tensor infos, alignment, data section), then the llama
// architecture's checks (gguf::read_llama), the Model it opens into (every
// tensor dequantized) and its embedded tokenizer (a text encodes to ids
// inside the vocabulary). Anything accepted must keep its
// views inside the bytes: every value is read through its typed accessors and
// every tensor byte is touched, so ASan checks them.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "fuzz_check.hpp"
#include "heap_meter.hpp"
#include "llama/error.hpp"
#include "llama/formats/gguf_file.hpp"
#include "llama/formats/gguf_llama.hpp"
#include "llama/formats/gguf_model.hpp"
#include "llama/formats/gguf_tokenizer.hpp"
#include "llama/kernels/numbers/dequantize.hpp"

namespace {

void check_inside(std::span<const std::byte> view, const std::byte* base, size_t size) {
  if (view.empty()) return;
  FUZZ_CHECK(view.data() >= base && view.data() <= base + size, "view starts outside the bytes");
  FUZZ_CHECK(view.size() <= static_cast<size_t>(base + size - view.data()),
             "view extends past the bytes");
  volatile uint8_t sink = 0;
  for (std::byte b : view) sink = static_cast<uint8_t>(sink + static_cast<uint8_t>(b));
}

void read_values(const llama::gguf::File& f, const std::byte* base, size_t size) {
  for (const llama::gguf::KeyValue& kv : f.metadata()) {
    FUZZ_CHECK(f.find(kv.key) == &kv.value, "key does not find its own value");
    const llama::gguf::Value& v = kv.value;
    check_inside(v.bytes, base, size);
    (void)v.as_uint();
    (void)v.as_int();
    (void)v.as_float();
    (void)v.as_bool();
    (void)v.as_string();
    if (auto s = v.as_strings()) {
      FUZZ_CHECK(s->size() == v.count, "string array count");
      for (std::string_view t : *s) {
        check_inside({reinterpret_cast<const std::byte*>(t.data()), t.size()}, base, size);
      }
    }
    if (auto a = v.as_floats()) FUZZ_CHECK(a->size() == v.count, "float array count");
    (void)v.as_ints();
    (void)v.as_uints();
  }
}

void check_tensors(const llama::gguf::File& f, const std::byte* base, size_t size) {
  FUZZ_CHECK(f.alignment() > 0 && (f.alignment() & (f.alignment() - 1)) == 0, "alignment");
  for (const llama::gguf::Tensor& t : f.tensors()) {
    FUZZ_CHECK(f.find_tensor(t.name) == &t, "tensor name does not find its tensor");
    const llama::gguf::TypeLayout* layout = llama::gguf::type_layout(t.type);
    FUZZ_CHECK(layout != nullptr, "unknown type accepted");
    FUZZ_CHECK(t.offset % f.alignment() == 0, "misaligned tensor accepted");
    int64_t elements = 1;
    for (int64_t d : t.shape) elements *= d;
    FUZZ_CHECK(elements == t.elements, "shape and element count disagree");
    FUZZ_CHECK(static_cast<int64_t>(t.data.size()) ==
                   t.elements / layout->block_values * layout->block_bytes,
               "tensor bytes and shape disagree");
    if (!t.data.empty()) {
      FUZZ_CHECK(t.data.data() == base + f.data_offset() + t.offset, "tensor not at its offset");
    }
    check_inside(t.data, base, size);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // An exact-size heap copy: ASan's redzone starts right after it.
  auto bytes = std::make_unique<std::byte[]>(size);
  if (size > 0) std::memcpy(bytes.get(), data, size);
  try {
    // Counts and sizes in the header are checked against the bytes before anything
    // is reserved for them: the file and the llama model read from it are a small
    // multiple of the input.
    std::optional<fuzz::HeapMeter> meter;
    meter.emplace(fuzz::kParseHeapBound + fuzz::kParseHeapPerByte * size, "gguf::File::parse");
    const auto f = llama::gguf::File::parse({bytes.get(), size}, "fuzz.gguf", nullptr);
    meter.reset();
    read_values(f, bytes.get(), size);
    check_tensors(f, bytes.get(), size);
    meter.emplace(fuzz::kParseHeapBound + fuzz::kParseHeapPerByte * size, "read_llama");
    const llama::gguf::LlamaFile m = llama::gguf::read_llama(f);
    meter.reset();
    FUZZ_CHECK(static_cast<int64_t>(m.layers.size()) == m.n_layers, "layer count");
    FUZZ_CHECK(m.token_embd->shape[0] == m.vocab_size, "embedding rows are the vocabulary");
    // As the core's Model: every tensor a checked view, dequantized whole
    // (its bytes are inside the input, so this stays small).
    meter.emplace(fuzz::kParseHeapBound + fuzz::kParseHeapPerByte * size, "gguf::to_model");
    const llama::Model model = llama::gguf::to_model(f);
    meter.reset();
    std::vector<float> values;
    model.weights.for_each([&](const llama::Tensor& t) {
      values.resize(static_cast<size_t>(t.elements()));
      llama::dequantize(t, values);
    });
    if (llama::gguf::has_tokenizer(f)) {
      const auto tok = llama::gguf::open_tokenizer(f, m.vocab_size);
      for (int32_t id : tok->encode("Once upon a time, \xe6\x97\xa5 <s>")) {
        FUZZ_CHECK(id >= 0 && id < tok->vocab_size(), "encoded id outside the vocabulary");
      }
    }
  } catch (const llama::Error& e) {
    FUZZ_CHECK(std::strncmp(e.what(), "fuzz.gguf: ", 11) == 0, "error does not name the file");
    FUZZ_CHECK(std::strchr(e.what(), '\n') == nullptr, "error is not one line");
  }
  return 0;
}
