// The GGUF container: llama.cpp's own files read correctly, every value type and
// the writer round-trip, and every hostile header of issue 16 refused with one
// line naming the file, before anything is allocated.
#include <catch2/catch.hpp>
#include <limits>
#include <sstream>

#include "gguf_bytes.hpp"
#include "llama/error.hpp"
#include "llama/formats/gguf_file.hpp"
#include "llama/formats/gguf_writer.hpp"
#include "test_support.hpp"

using llama::Error;
using llama::test::GgufBytes;
namespace gguf = llama::gguf;

namespace {

gguf::File parse(const std::vector<std::byte>& b) {
  return gguf::File::parse(b, "t.gguf", nullptr);
}

// Parsing fails with one line that names the file and contains one of `whys`.
void refused(const std::vector<std::byte>& b, std::initializer_list<std::string> whys) {
  try {
    (void)parse(b);
    FAIL("accepted; expected: " << *whys.begin());
  } catch (const Error& e) {
    const std::string msg = e.what();
    INFO(msg);
    CHECK(msg.rfind("t.gguf: ", 0) == 0);
    CHECK(msg.find('\n') == std::string::npos);
    bool found = false;
    for (const std::string& why : whys) found = found || msg.find(why) != std::string::npos;
    CHECK(found);
  }
}
void refused(const std::vector<std::byte>& b, const std::string& why) { refused(b, {why}); }

// One F32 tensor "w" of 8 values after one key, as a base for mutations.
GgufBytes one_tensor(uint64_t offset = 0, std::vector<uint64_t> ne = {8}, uint32_t type = 0) {
  GgufBytes g(1, 1);
  g.kv_str("general.architecture", "llama");
  g.tensor("w", ne, type, offset);
  return g;
}

}  // namespace

TEST_CASE("gguf: llama.cpp's stories1M Q4_0 file", "[gguf]") {
  const auto f = gguf::File::open(llama::test::model_path("gguf/stories1M.q4_0.gguf"));
  CHECK(f.version() == 3);
  CHECK(f.metadata().size() == 21);
  CHECK(f.tensors().size() == 48);
  CHECK(f.alignment() == 32);
  CHECK(f.data_offset() % 32 == 0);
  CHECK(f.string("general.architecture") == "llama");
  CHECK(f.uint("llama.embedding_length") == 128);
  CHECK(f.uint("llama.block_count") == 5);
  CHECK(f.number("llama.attention.layer_norm_rms_epsilon") == Approx(1e-5).epsilon(1e-6));
  CHECK(f.string("tokenizer.ggml.model") == "llama");
  const auto tokens = f.find("tokenizer.ggml.tokens")->as_strings();
  REQUIRE(tokens);
  REQUIRE(tokens->size() == 2048);
  CHECK((*tokens)[0] == "<unk>");
  CHECK((*tokens)[3] == "<0x00>");
  CHECK(f.find("tokenizer.ggml.scores")->as_floats()->size() == 2048);
  CHECK(f.find("tokenizer.ggml.token_type")->as_ints()->at(1) == 3);  // control
  // An unsigned key holding 2^32-1 stays unsigned.
  CHECK(f.uint("tokenizer.ggml.padding_token_id") == 4294967295u);

  const gguf::Tensor* emb = f.find_tensor("token_embd.weight");
  REQUIRE(emb != nullptr);
  CHECK(emb->shape == std::vector<int64_t>{2048, 128});
  CHECK(emb->type == static_cast<uint32_t>(gguf::TensorType::Q4_0));
  CHECK(emb->data.size() == 2048 * 128 / 32 * 18);
  const gguf::Tensor* out = f.find_tensor("output.weight");
  REQUIRE(out != nullptr);
  CHECK(gguf::type_name(out->type) == "Q8_0");
  CHECK(f.find_tensor("blk.4.ffn_down.weight")->shape == std::vector<int64_t>{128, 352});
  CHECK(f.find_tensor("blk.0.attn_norm.weight")->shape == std::vector<int64_t>{128});
  CHECK(f.find_tensor("nonexistent") == nullptr);
  // The last tensor ends inside the file.
  const auto* end = f.tensors().back().data.data() + f.tensors().back().data.size();
  const auto* base = f.tensors().front().data.data() - f.tensors().front().offset;
  CHECK(static_cast<uint64_t>(end - base) + f.data_offset() <= f.file_size());
}

TEST_CASE("gguf: every shared file parses, tensors tile their data sections", "[gguf]") {
  for (const char* name : {"stories1M.f32", "stories1M.f16", "stories1M.q8_0", "stories1M.q4_0",
                           "rand-k.q4_k_m", "rand-k.q6_k"}) {
    INFO(name);
    const auto f = gguf::File::open(llama::test::model_path(std::string("gguf/") + name + ".gguf"));
    uint64_t bytes = 0;
    for (const gguf::Tensor& t : f.tensors()) bytes += t.data.size();
    CHECK(bytes <= f.file_size() - f.data_offset());
    CHECK(bytes + 32 * f.tensors().size() >= f.file_size() - f.data_offset());
  }
}

TEST_CASE("gguf: every metadata value type round-trips through the writer", "[gguf]") {
  gguf::Writer w;
  w.set_u32("a.u32", 4000000000u);
  w.set_i32("a.i32", -7);
  w.set_u64("a.u64", 1ull << 40);
  w.set_f32("a.f32", 0.25f);
  w.set_bool("a.bool", true);
  w.set_string("a.string", "h\xc3\xa9llo");
  w.set_strings("a.strings", {"", "x", "yz"});
  w.set_f32s("a.f32s", {1.5f, -2});
  w.set_i32s("a.i32s", {-1, 2, 3});
  // The types the writer has no setter for, encoded by hand.
  auto enc = [](std::initializer_list<uint8_t> b) {
    std::vector<std::byte> v;
    for (uint8_t x : b) v.push_back(std::byte{x});
    return v;
  };
  w.set_encoded("a.u8", gguf::ValueType::u8, enc({200}));
  w.set_encoded("a.i8", gguf::ValueType::i8, enc({0xff}));
  w.set_encoded("a.u16", gguf::ValueType::u16, enc({0x34, 0x12}));
  w.set_encoded("a.i16", gguf::ValueType::i16, enc({0xfe, 0xff}));
  w.set_encoded("a.i64", gguf::ValueType::i64,
                enc({0xfd, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}));
  w.set_encoded("a.f64", gguf::ValueType::f64, enc({0, 0, 0, 0, 0, 0, 0xf0, 0x3f}));
  w.set_encoded("a.bools", gguf::ValueType::array, enc({7, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 1, 0}));
  w.set_encoded("a.u16s", gguf::ValueType::array,
                enc({2, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 1, 0, 9, 0}));
  std::stringstream s;
  w.add_tensor("t", {2, 32}, gguf::TensorType::Q8_0,
               [] { return std::vector<std::byte>(2 * 34, std::byte{1}); });
  w.write(s, "mem");
  const std::string text = s.str();
  std::vector<std::byte> b(text.size());
  std::memcpy(b.data(), text.data(), text.size());
  const auto f = parse(b);

  CHECK(f.uint("a.u32") == 4000000000u);
  CHECK(f.find("a.i32")->as_int() == -7);
  CHECK(!f.find("a.i32")->as_uint());
  CHECK(f.uint("a.u64") == (1ull << 40));
  CHECK(f.number("a.f32") == 0.25);
  CHECK(f.optional_bool("a.bool") == true);
  CHECK(f.string("a.string") == "h\xc3\xa9llo");
  CHECK(*f.find("a.strings")->as_strings() == std::vector<std::string_view>{"", "x", "yz"});
  CHECK(*f.find("a.f32s")->as_floats() == std::vector<float>{1.5f, -2});
  CHECK(*f.find("a.i32s")->as_ints() == std::vector<int64_t>{-1, 2, 3});
  CHECK(!f.find("a.i32s")->as_uints());
  CHECK(f.uint("a.u8") == 200);
  CHECK(f.find("a.i8")->as_int() == -1);
  CHECK(f.uint("a.u16") == 0x1234);
  CHECK(f.find("a.i16")->as_int() == -2);
  CHECK(f.find("a.i64")->as_int() == -3);
  CHECK(f.number("a.f64") == 1.0);
  CHECK(f.find("a.bools")->count == 2);
  CHECK(*f.find("a.u16s")->as_uints() == std::vector<uint64_t>{1, 9});
  // Wrong kinds are refused naming the key.
  CHECK_THROWS_WITH(f.string("a.u32"),
                    "t.gguf: metadata key \"a.u32\" is a u32, expected a string");
  CHECK_THROWS_WITH(f.uint("a.i32"), "t.gguf: metadata key \"a.i32\" is negative (-7)");
  CHECK_THROWS_WITH(f.uint("missing.key"), "t.gguf: metadata key \"missing.key\" is missing");
  CHECK(!f.optional_uint("missing.key"));
  REQUIRE(f.tensors().size() == 1);
  CHECK(f.tensors()[0].shape == std::vector<int64_t>{2, 32});
  CHECK(f.tensors()[0].data.size() == 68);
}

TEST_CASE("gguf: a custom alignment places the data section and offsets", "[gguf]") {
  gguf::Writer w;
  w.add_tensor("a", {3}, gguf::TensorType::F32, [] { return std::vector<std::byte>(12); });
  w.add_tensor("b", {5}, gguf::TensorType::F32, [] { return std::vector<std::byte>(20); });
  std::stringstream s;
  w.write(s, "mem", 256);
  const std::string text = s.str();
  std::vector<std::byte> b(text.size());
  std::memcpy(b.data(), text.data(), text.size());
  const auto f = parse(b);
  CHECK(f.alignment() == 256);
  CHECK(f.data_offset() % 256 == 0);
  CHECK(f.find_tensor("b")->offset == 256);
}

TEST_CASE("gguf: every truncation of a valid file is refused", "[gguf][robustness]") {
  GgufBytes g(1, 2);
  g.kv_str("general.architecture", "llama").key("list", 9).u32(8).u64(2).str("ab").str("c");
  g.tensor("w", {8}, 0, 0);
  const size_t infos_end = g.bytes.size();
  g.data(32);
  (void)parse(g.bytes);
  for (size_t n = 0; n < g.bytes.size(); ++n) {
    INFO("prefix of " << n << " bytes");
    auto cut = g.bytes;
    cut.resize(n);
    if (n < infos_end) {
      refused(cut, {"truncated", "bytes can hold", "past the end"});
    } else {
      refused(cut, {"outside the data section"});
    }
  }
}

TEST_CASE("gguf: counts larger than the file can hold are refused before allocating",
          "[gguf][robustness]") {
  refused(GgufBytes(uint64_t{1} << 62, 0).bytes, "tensors and 0 metadata entries, more than");
  refused(GgufBytes(0, uint64_t{1} << 62).bytes, "4611686018427387904 metadata entries");
  refused(GgufBytes(~uint64_t{0}, ~uint64_t{0}).bytes, "more than the remaining 0 bytes");
  // Counts the bytes could hold but past the reader's caps.
  GgufBytes many(0, gguf::File::kMaxMetadata + 1);
  many.bytes.resize(many.bytes.size() + 13 * (gguf::File::kMaxMetadata + 1));
  refused(many.bytes, "more than this reader accepts (65536)");
}

TEST_CASE("gguf: string and array lengths past the end or overflowing are refused",
          "[gguf][robustness]") {
  refused(GgufBytes(0, 1).u64(1000).text("abc").u64(0).bytes, "claims 1000 bytes, past the end");
  refused(GgufBytes(0, 1).u64(~uint64_t{0}).text("abc").u64(0).bytes,
          "claims 18446744073709551615 bytes");
  refused(GgufBytes(0, 1).key("k", 8).u64(uint64_t{1} << 63).bytes, "past the end of the file");
  // Arrays whose count times element size overflows 64 bits, or exceeds the file.
  refused(GgufBytes(0, 1).key("k", 9).u32(10).u64(uint64_t{1} << 61).u64(0).bytes,
          "claims 2305843009213693952 elements");
  refused(GgufBytes(0, 1).key("k", 9).u32(10).u64(~uint64_t{0}).bytes, "elements");
  refused(GgufBytes(0, 1).key("k", 9).u32(4).u64(3).u32(1).u32(2).bytes, "elements");
  // A string array whose strings run past the end.
  refused(GgufBytes(0, 1).key("k", 9).u32(8).u64(2).str("ok").u64(50).text("x").bytes,
          "metadata key \"k\"[1] at offset");
  refused(GgufBytes(0, 1).key("k", 9).u32(8).u64(1u << 30).bytes, "1073741824 elements");
}

TEST_CASE("gguf: unknown value types, nested arrays and bad bools are refused",
          "[gguf][robustness]") {
  refused(GgufBytes(0, 1).key("k", 13).u32(0).bytes,
          "metadata key \"k\" has unknown value type 13");
  refused(GgufBytes(0, 1).key("k", 0xffffffff).bytes, "unknown value type 4294967295");
  refused(GgufBytes(0, 1).key("k", 9).u32(77).u64(0).bytes, "element has unknown value type 77");
  refused(GgufBytes(0, 1).key("k", 9).u32(9).u64(1).u32(4).u64(1).u32(5).bytes,
          "is an array of arrays");
  refused(GgufBytes(0, 1).key("k", 7).u8(2).bytes, "is a bool of value 2");
  refused(GgufBytes(0, 1).key("k", 9).u32(7).u64(3).u8(1).u8(0).u8(9).bytes, "\"k\"[2] is a bool");
  refused(GgufBytes(0, 2).kv_u32("k", 1).kv_u32("k", 2).bytes, "duplicate metadata key \"k\"");
  // Control bytes in a key are escaped, keeping the message on one line.
  refused(GgufBytes(0, 1).key("a\nb", 13).bytes, "\"a\\x0ab\" has unknown value type");
}

TEST_CASE("gguf: bad versions, magic and alignment are refused", "[gguf][robustness]") {
  refused(GgufBytes(0, 0, 1).bytes, "GGUF version 1 is not supported");
  refused(GgufBytes(0, 0, 4).bytes, "unsupported GGUF version 4");
  refused(GgufBytes(0, 0, 0x03000000).bytes, "big-endian GGUF file (version 3)");
  auto bad_magic = GgufBytes(0, 0).bytes;
  bad_magic[0] = std::byte{'X'};
  refused(bad_magic, "not a GGUF file");
  refused(GgufBytes(0, 1).kv_u32("general.alignment", 48).bytes, "48 is not a power of two");
  refused(GgufBytes(0, 1).kv_u32("general.alignment", 0).bytes, "0 is not a power of two");
  refused(GgufBytes(0, 1).kv_str("general.alignment", "32").bytes, "the format requires u32");
  CHECK(parse(GgufBytes(0, 0, 2).bytes).version() == 2);
}

TEST_CASE("gguf: hostile tensor infos are refused", "[gguf][robustness]") {
  const uint64_t big = uint64_t{1} << 32;
  refused(one_tensor(0, {big, big}).data(32).bytes, "dimensions multiply past 2^63");
  refused(one_tensor(0, {~uint64_t{0}}).data(32).bytes, "dimensions multiply past 2^63");
  // A zero dimension does not hide an overflowing product of the others.
  refused(one_tensor(0, {0, big, big}).data(32).bytes, "dimensions multiply past 2^63");
  refused(one_tensor(0, {1, 1, 1, 1, 1}).data(32).bytes, "has 5 dimensions (at most 4)");
  refused(one_tensor(0, {8}, 4).data(32).bytes, "tensor \"w\" has unknown type 4");
  refused(one_tensor(0, {8}, 39).data(32).bytes, "unknown type 39");
  refused(one_tensor(0, {40, 2}, 8).data(200).bytes,
          "rows of 40 values, not a multiple of its block of 32");
  // Q3_K (11) and Q2_K (10): super-blocks of 256 values in 110 and 84 bytes.
  refused(one_tensor(0, {100, 2}, 11).data(256).bytes,
          "rows of 100 values, not a multiple of its block of 256");
  refused(one_tensor(0, {256, 2}, 10).data(160).bytes,
          "bytes 0 + 168 fall outside the data section of 160");
  refused(one_tensor(0, {16}).data(32).bytes, "bytes 0 + 64 fall outside the data section of 32");
  refused(one_tensor(64, {8}).data(32).bytes, "bytes 64 + 32 fall outside");
  refused(one_tensor(~uint64_t{0} - 31, {8}).data(32).bytes, "fall outside the data section");
  refused(one_tensor(4, {8}).data(64).bytes, "offset 4 is not a multiple of the alignment 32");
  // Elements within int64 but bytes past it: 2^62 f32 values.
  refused(one_tensor(0, {uint64_t{1} << 62}).data(32).bytes, "size overflows");
  refused(GgufBytes(1, 0).tensor(std::string(64, 'n'), {8}, 0, 0).data(32).bytes,
          "name of 64 bytes (at most 63)");

  GgufBytes two(2, 0);
  two.tensor("w", {8}, 0, 0).tensor("w", {8}, 0, 32).data(64);
  refused(two.bytes, "two tensors named \"w\" (tensor infos 0 and 1)");
  GgufBytes overlap(2, 0);
  overlap.tensor("a", {16}, 0, 0).tensor("b", {8}, 0, 32).data(96);
  refused(overlap.bytes, "tensors \"a\" and \"b\" overlap");
  // The base itself is accepted.
  const auto f = parse(one_tensor().data(32).bytes);
  CHECK(f.tensors().at(0).shape == std::vector<int64_t>{8});
}
