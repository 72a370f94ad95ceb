// safetensors: the shared models read in place, the writer's files read back,
// and every bad header refused with one line naming the file.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>

#include "hf_fixtures.hpp"
#include "llama/error.hpp"
#include "llama/formats/safetensors.hpp"
#include "test_support.hpp"

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using llama::SafetensorsDtype;
using llama::SafetensorsFile;
using llama::SafetensorsModel;
using namespace llama::test;

namespace {

SafetensorsFile parse_bytes(const std::vector<std::byte>& bytes,
                            const std::string& source = "t.safetensors") {
  return SafetensorsFile::parse(bytes, source, nullptr);
}

// Parsing `header` (with `data` bytes after it) fails with one line that
// starts with the file name and contains `why`.
void require_refused(const std::string& header, size_t data, const std::string& why,
                     std::optional<uint64_t> header_length = {}) {
  INFO("header: " << header);
  try {
    (void)parse_bytes(raw_safetensors(header, data, header_length));
    FAIL("accepted");
  } catch (const llama::Error& e) {
    const std::string what = e.what();
    CHECK_THAT(what, StartsWith("t.safetensors: ") && Contains(why));
    CHECK(what.find('\n') == std::string::npos);
  }
}

}  // namespace

TEST_CASE("safetensors reads the shared f32 and bf16 stories1M in place", "[safetensors]") {
  for (const auto& [dir, dtype] : {std::pair{"hf/stories1M", SafetensorsDtype::F32},
                                   std::pair{"hf/stories1M-bf16", SafetensorsDtype::BF16}}) {
    const std::string path = model_path(std::string(dir) + "/model.safetensors");
    const SafetensorsFile f = SafetensorsFile::open(path);
    CHECK(f.file_size() == static_cast<int64_t>(std::filesystem::file_size(path)));
    // embed + 5 layers x 9 + final norm; tied, so no lm_head.
    REQUIRE(f.tensors().size() == 1 + 5 * 9 + 1);
    const auto* embed = f.find("model.embed_tokens.weight");
    REQUIRE(embed != nullptr);
    CHECK(embed->dtype == dtype);
    CHECK(embed->shape == std::vector<int64_t>{2048, 128});
    CHECK(static_cast<int64_t>(embed->bytes.size()) == 2048 * 128 * llama::element_bytes(dtype));
    CHECK(f.find("lm_head.weight") == nullptr);
    // Back to back after the header, in file order.
    int64_t at = 8 + f.header_bytes();
    for (const auto& t : f.tensors()) {
      CHECK(t.offset == at);
      at += static_cast<int64_t>(t.bytes.size());
    }
    CHECK(at == f.file_size());
  }
}

TEST_CASE("safetensors written by the project read back with their bytes and metadata",
          "[safetensors]") {
  const std::vector<float> a = {1.5f, -2.0f, 3.25f};
  const std::vector<uint16_t> b = {0x3f80, 0xc000};  // bf16 1, -2
  const std::vector<uint16_t> h = {0x3c00};          // f16 1
  const std::vector<llama::SafetensorsOutput> out = {
      {"b", SafetensorsDtype::BF16, {2}, std::as_bytes(std::span(b))},
      {"a", SafetensorsDtype::F32, {3, 1}, std::as_bytes(std::span(a))},
      {"scalar", SafetensorsDtype::F16, {}, std::as_bytes(std::span(h))},
      {"empty", SafetensorsDtype::F32, {0, 4}, {}},
  };
  std::ostringstream s;
  llama::write_safetensors(s, out, {{"format", "pt"}}, "w");
  const std::string text = s.str();
  std::vector<std::byte> bytes(text.size());
  std::memcpy(bytes.data(), text.data(), text.size());
  const SafetensorsFile f = parse_bytes(bytes);
  CHECK((8 + f.header_bytes()) % 8 == 0);  // data 8-byte aligned
  REQUIRE(f.metadata().size() == 1);
  CHECK(f.metadata()[0] == std::pair<std::string, std::string>{"format", "pt"});
  REQUIRE(f.tensors().size() == 4);
  for (const auto& o : out) {
    const auto* t = f.find(o.name);
    REQUIRE(t != nullptr);
    CHECK(t->dtype == o.dtype);
    CHECK(t->shape == o.shape);
    REQUIRE(t->bytes.size() == o.bytes.size());
    CHECK(std::equal(t->bytes.begin(), t->bytes.end(), o.bytes.begin()));
  }
  CHECK(f.find("scalar")->elements() == 1);
  CHECK(f.find("missing") == nullptr);
  // A name used twice is refused by the writer.
  const std::vector<llama::SafetensorsOutput> twice = {out[1], out[1]};
  std::ostringstream s2;
  CHECK_THROWS_WITH(llama::write_safetensors(s2, twice, {}, "w"),
                    Contains("\"a\": the name is taken"));
}

TEST_CASE("safetensors refuses a header length beyond the file or above 100 MB",
          "[safetensors][robustness]") {
  require_refused("", 0, "header: does not start with '{'", 0);  // 8 bytes, empty header
  try {
    (void)parse_bytes(std::vector<std::byte>(5));
    FAIL("accepted");
  } catch (const llama::Error& e) {
    CHECK_THAT(e.what(), StartsWith("t.safetensors: 5 bytes, too short"));
  }
  require_refused("{}", 0, "header length 3 is beyond the file (10 bytes", 3);
  require_refused("{}", 0, "header length 100000001 is above the 100000000-byte limit", 100000001);
  require_refused("{}", 0, "header length 18446744073709551614 is above", ~uint64_t{1});
}

TEST_CASE("safetensors refuses invalid JSON and a structure other than the format's",
          "[safetensors][robustness]") {
  require_refused("{\"a\": ", 0, "header: invalid JSON: ");
  require_refused("{\"a\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 4]}} x", 4,
                  "header: invalid JSON: ");
  require_refused("[1, 2]", 0, "header: does not start with '{'");
  require_refused("{\"a\": 5}", 0, "tensor \"a\": must be an object, not a number");
  require_refused("{\"a\": {\"dtype\": 5}}", 0, "tensor \"a\": \"dtype\" must be a string");
  require_refused(
      "{\"a\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 4], \"x\": 1}}", 4,
      "tensor \"a\": unexpected key \"x\"");
  require_refused("{\"a\": {\"dtype\": \"F32\", \"data_offsets\": [0, 4]}}", 4,
                  "tensor \"a\": has no \"shape\"");
  require_refused("{\"a\": {\"dtype\": \"F32\", \"shape\": [-1], \"data_offsets\": [0, 4]}}", 4,
                  "negative number -1 in \"shape\"");
  require_refused("{\"a\": {\"dtype\": \"F32\", \"shape\": [1.5], \"data_offsets\": [0, 4]}}", 4,
                  "\"1.5\" is not an integer");
  require_refused("{\"a\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0]}}", 4,
                  "\"data_offsets\" must hold two numbers");
  require_refused("{\"a\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 4, 8]}}", 4,
                  "\"data_offsets\" must hold two numbers");
  require_refused("{\"__metadata__\": {\"k\": 1}}", 0,
                  "\"__metadata__\" value of \"k\" must be a string");
  require_refused("{\"__metadata__\": {\"k\": \"1\", \"k\": \"2\"}}", 0, "duplicate key \"k\"");
  require_refused(
      "{\"a\": {\"dtype\": \"F32\", \"shape\": [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, "
      "1, 1, 1, 1, 1], \"data_offsets\": [0, 4]}}",
      4, "more than 16 dimensions");
  require_refused(
      "{\"a\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, "
      "99999999999999999999]}}",
      4, "\"99999999999999999999\" is not an integer");  // beyond 64 bits: a float
}

TEST_CASE("safetensors refuses an unknown dtype and offsets that disagree with the file",
          "[safetensors][robustness]") {
  const auto entry = [](const std::string& name, const std::string& dtype, const std::string& shape,
                        int64_t b, int64_t e) {
    return "\"" + name + "\": {\"dtype\": \"" + dtype + "\", \"shape\": " + shape +
           ", \"data_offsets\": [" + std::to_string(b) + ", " + std::to_string(e) + "]}";
  };
  require_refused(std::string("{") + entry("w", "F33", "[2]", 0, 8) + "}", 8,
                  "tensor \"w\": unknown dtype \"F33\"");
  require_refused(std::string("{") + entry("w", "F32", "[4]", 0, 16) + "}", 8,
                  "tensor \"w\": data_offsets [0, 16] fall outside the file");
  require_refused(std::string("{") + entry("w", "F32", "[3]", 0, 8) + "}", 8,
                  "data_offsets [0, 8] hold 8 bytes but dtype F32 x shape [3] needs 12");
  require_refused(std::string("{") + entry("w", "BF16", "[2]", 8, 4) + "}", 8,
                  "end before they begin");
  require_refused(std::string("{") + entry("w", "F32", "[4611686018427387904, 4]", 0, 8) + "}", 8,
                  "size overflows 64-bit arithmetic");
  require_refused(std::string("{") + entry("a", "F32", "[2]", 0, 8) + ", " +
                      entry("b", "F32", "[1]", 4, 8) + "}",
                  8, "tensor \"b\" (data_offsets [4, 8]) overlaps tensor \"a\"");
  require_refused(std::string("{") + entry("a", "F32", "[1]", 4, 8) + "}", 8,
                  "data bytes [0, 4) before tensor \"a\" belong to no tensor");
  require_refused(std::string("{") + entry("a", "F32", "[1]", 0, 4) + "}", 8,
                  "4 bytes after the last tensor's data");
  require_refused(std::string("{") + entry("a", "F32", "[1]", 0, 4) + ", " +
                      entry("a", "F32", "[1]", 4, 8) + "}",
                  8, "duplicate tensor \"a\"");
  // The others the format defines are read (and refused later, by the model loader).
  const SafetensorsFile f = parse_bytes(raw_safetensors(
      std::string("{") + entry("i", "I8", "[3]", 0, 3) + ", " + entry("z", "F32", "[0]", 3, 3) +
          ", " + entry("d", "F64", "[1]", 3, 11) + "}",
      11));
  CHECK(f.find("i")->dtype == SafetensorsDtype::I8);
  CHECK(f.find("z")->bytes.empty());
  CHECK(f.find("d")->bytes.size() == 8);
}

TEST_CASE("safetensors opens the shards of an index and checks them against it",
          "[safetensors][robustness]") {
  const SafetensorsModel m =
      SafetensorsModel::open(model_path("hf/rand-mistral-f16/model.safetensors.index.json"));
  CHECK(m.files().size() == 2);
  CHECK(m.entries().size() == 21);
  const auto e = m.find("lm_head.weight");
  REQUIRE(e.file != nullptr);
  CHECK_THAT(e.file->source(), Contains("model-00002-of-00002.safetensors"));
  CHECK(e.tensor->dtype == SafetensorsDtype::F16);

  const std::string dir = temp_path("shards");
  std::filesystem::create_directories(dir);
  const auto a = std::vector<FixtureTensor>{{"x", SafetensorsDtype::F32, {2}}};
  const auto b = std::vector<FixtureTensor>{{"y", SafetensorsDtype::F32, {3}}};
  write_file(dir + "/a.safetensors", safetensors_bytes(a));
  write_file(dir + "/b.safetensors", safetensors_bytes(b));
  const auto refused = [&](const std::string& index, const std::string& why) {
    INFO(index);
    write_text(dir + "/model.safetensors.index.json", index);
    try {
      (void)SafetensorsModel::open(dir + "/model.safetensors.index.json");
      FAIL("accepted");
    } catch (const llama::Error& e) {
      CHECK_THAT(e.what(), Contains(why));
      CHECK(std::string(e.what()).find('\n') == std::string::npos);
    }
  };
  write_text(dir + "/model.safetensors.index.json",
             R"({"metadata": {}, "weight_map": {"x": "a.safetensors", "y": "b.safetensors"}})");
  CHECK(SafetensorsModel::open(dir + "/model.safetensors.index.json").entries().size() == 2);
  refused(R"({"weight_map": {"x": "a.safetensors", "y": "c.safetensors"}})",
          "model.safetensors.index.json: shard \"c.safetensors\" (holding \"y\") is absent");
  refused(R"({"weight_map": {"x": "a.safetensors", "y": "a.safetensors"}})",
          "tensor \"y\" is listed in shard \"a.safetensors\" but is not in its header");
  write_file(dir + "/c.safetensors", safetensors_bytes({{"x", SafetensorsDtype::F32, {2}},
                                                        {"z", SafetensorsDtype::F32, {1}}}));
  refused(R"({"weight_map": {"x": "c.safetensors"}})",
          "c.safetensors: tensor \"z\" is not in the index");
  refused(R"({"weight_map": {"x": "a.safetensors", "z": "c.safetensors"}})",
          "c.safetensors: tensor \"x\" is listed in " + dir +
              "/model.safetensors.index.json under shard \"a.safetensors\"");
  refused(R"({"weight_map": {"x": "../a.safetensors"}})",
          "names shard \"../a.safetensors\", which is not a file name in the index's directory");
  refused(R"({"weight_map": {"x": "a.safetensors", "x": "a.safetensors"}})",
          "invalid JSON: duplicate key \"x\" in \"weight_map\"");
  refused(R"({"weight_map": {"x": 3}})", "tensor \"x\" maps to a number, not a shard file name");
  refused(R"({"metadata": {}})", "has no \"weight_map\"");
  refused(R"({"weight_map": {}})", "\"weight_map\" lists no tensors");
  refused(R"({"weight_map": )", "model.safetensors.index.json: invalid JSON: ");
}
