// GGUF's block types against llama.cpp's own code: dequantization of seeded
// random blocks, every f16/bf16 bit pattern, the quantizers, and every block
// tensor of the shared files, each compared by hash with what ggml-quants.c
// produced out of tree (tests/data/ggml-blocks.json says how). Then our
// quantizers reproduce llama-quantize's shared files byte for byte.
// f16 and bf16 are also checked against their definitions in double and the CPU's F16C.
#include <immintrin.h>

#include <algorithm>
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <vector>

#include "llama/formats/gguf_file.hpp"
#include "llama/kernels/dispatch/cpu_features.hpp"
#include "llama/kernels/numbers/gguf_blocks.hpp"
#include "llama/kernels/numbers/half.hpp"
#include "llama/kernels/numbers/low_kquant_blocks.hpp"
#include "test_support.hpp"

namespace gguf = llama::gguf;

namespace {

// run.c's xorshift*, 64-bit output; gen.py's Rng.
struct Rng {
  uint64_t s;
  uint64_t next() {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    return s * 0x2545F4914F6CDD1Dull;
  }
  std::vector<std::byte> bytes(size_t n) {
    std::vector<std::byte> out;
    while (out.size() < n) {
      const uint64_t v = next();
      for (int i = 0; i < 8; ++i) out.push_back(static_cast<std::byte>(v >> (8 * i)));
    }
    out.resize(n);
    return out;
  }
};

std::string fnv64(const void* data, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

template <typename T>
std::string fnv64(const std::vector<T>& v) {
  return fnv64(v.data(), v.size() * sizeof(T));
}

template <typename Block>
std::span<const Block> blocks_of(std::span<const std::byte> b) {
  REQUIRE(reinterpret_cast<uintptr_t>(b.data()) % alignof(Block) == 0);
  return {reinterpret_cast<const Block*>(b.data()), b.size() / sizeof(Block)};
}

// Values of `bytes` holding `n` values of GGUF type `type` (test dispatch).
std::vector<float> dequantize(const std::string& type, std::span<const std::byte> bytes, size_t n) {
  std::vector<float> out(n);
  if (type == "Q8_0") llama::dequantize_q8_0(blocks_of<llama::BlockQ8_0>(bytes), out);
  if (type == "Q4_0") llama::dequantize_q4_0(blocks_of<llama::BlockQ4_0>(bytes), out);
  if (type == "Q4_K") llama::dequantize_q4_k(blocks_of<llama::BlockQ4_K>(bytes), out);
  if (type == "Q5_K") llama::dequantize_q5_k(blocks_of<llama::BlockQ5_K>(bytes), out);
  if (type == "Q6_K") llama::dequantize_q6_k(blocks_of<llama::BlockQ6_K>(bytes), out);
  if (type == "Q3_K") llama::dequantize_q3_k(blocks_of<llama::BlockQ3_K>(bytes), out);
  if (type == "Q2_K") llama::dequantize_q2_k(blocks_of<llama::BlockQ2_K>(bytes), out);
  if (type == "F16") llama::f16_to_f32(blocks_of<uint16_t>(bytes), out);
  return out;
}

struct Layout {
  size_t bytes, values;
  std::vector<size_t> scale_fields;  // byte offsets of f16 scales in a block
};
Layout layout(const std::string& type) {
  if (type == "Q8_0") return {34, 32, {0}};
  if (type == "Q4_0") return {18, 32, {0}};
  if (type == "Q4_K") return {144, 256, {0, 2}};
  if (type == "Q5_K") return {176, 256, {0, 2}};
  if (type == "Q3_K") return {110, 256, {108}};
  if (type == "Q2_K") return {84, 256, {80, 82}};
  return {210, 256, {208}};  // Q6_K
}

const nlohmann::json& crosscheck() {
  static const nlohmann::json j = llama::test::load_json(LLAMA_TEST_DATA_DIR "/ggml-blocks.json");
  return j;
}

// gen.py's floats: per block of 32 a scale 2^(k - 12), the first block zeros.
std::vector<float> seeded_floats(uint64_t seed, size_t n) {
  Rng r{seed};
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) {
    const uint64_t u = r.next();
    const double scale = std::ldexp(1.0, static_cast<int>((i / 32) % 24) - 12);
    v[i] = static_cast<float>((static_cast<double>(u >> 40) / 16777216.0 - 0.5) * scale);
  }
  std::fill(v.begin(), v.begin() + 32, 0.0f);
  return v;
}

// Independent of ggml: the formats' definitions, evaluated in double.
uint32_t bits_of(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}
float from_bits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

// binary16 by its definition: (-1)^s x 2^(e - 15) x 1.m, subnormals 2^-14 x 0.m.
double f16_value(uint16_t h) {
  const int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
  const double sign = s ? -1.0 : 1.0;
  if (e == 31) return m ? std::numeric_limits<double>::quiet_NaN() : sign * INFINITY;
  if (e == 0) return sign * std::ldexp(m, -24);
  return sign * std::ldexp(1024 + m, e - 25);
}

// The nearest of the positive finite patterns `sorted` (ascending, consecutive
// from 0) and infinity (the next pattern, valued one ulp past the largest
// finite value, as IEEE rounding treats it) to x; ties to the even pattern.
template <typename Value>
uint16_t nearest(double x, const std::vector<uint16_t>& sorted, Value value) {
  const uint16_t top = sorted.back();
  const auto inf = static_cast<uint16_t>(top + 1);
  const double past = value(top) + (value(top) - value(static_cast<uint16_t>(top - 1)));
  const auto val = [&](uint16_t h) { return h == inf ? past : value(h); };
  const double ax = std::fabs(x);
  const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  if (ax >= past) return static_cast<uint16_t>(sign | inf);
  const auto it = std::lower_bound(sorted.begin(), sorted.end(), ax,
                                   [&](uint16_t h, double v) { return value(h) < v; });
  const uint16_t hi = it == sorted.end() ? inf : *it;
  if (val(hi) == ax) return static_cast<uint16_t>(sign | hi);
  const auto lo = static_cast<uint16_t>(hi - 1);
  const double dlo = ax - val(lo), dhi = val(hi) - ax;
  const uint16_t pick = dlo < dhi ? lo : dhi < dlo ? hi : ((lo & 1) == 0 ? lo : hi);
  return static_cast<uint16_t>(sign | pick);
}

}  // namespace

TEST_CASE("gguf blocks: dequantization equals ggml's on seeded random blocks", "[gguf][kernels]") {
  for (const auto& c : crosscheck()["blocks"]) {
    if (c.contains("all_bit_patterns")) continue;
    const std::string type = c["type"];
    INFO(type);
    const Layout l = layout(type);
    const size_t n = c["blocks"];
    auto b = Rng{c["seed"].get<uint64_t>()}.bytes(n * l.bytes);
    for (size_t i = 0; i < n; ++i) {
      for (size_t f : l.scale_fields) b[i * l.bytes + f + 1] &= std::byte{0xbf};  // finite scales
    }
    const auto y = dequantize(type, b, n * l.values);
    CHECK(y[0] == c["first"][0].get<float>());
    CHECK(y[3] == c["first"][3].get<float>());
    CHECK(fnv64(y) == c["fnv64"].get<std::string>());
  }
}

TEST_CASE("gguf blocks: every f16 and bf16 bit pattern widens as ggml's does", "[gguf][kernels]") {
  for (const auto& c : crosscheck()["blocks"]) {
    if (!c.contains("all_bit_patterns")) continue;
    const std::string type = c["type"];
    INFO(type);
    std::vector<float> kept;
    for (uint32_t h = 0; h < 65536; ++h) {
      const float f = type == "F16" ? llama::f16_to_f32(static_cast<uint16_t>(h))
                                    : llama::bf16_to_f32(static_cast<uint16_t>(h));
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      if ((bits & 0x7fffffff) > 0x7f800000) {
        CHECK(std::isnan(f));
        continue;
      }
      kept.push_back(f);
    }
    CHECK(fnv64(kept) == c["fnv64_non_nan"].get<std::string>());
  }
  // Round trips of every non-NaN pattern are the identity.
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = llama::f16_to_f32(static_cast<uint16_t>(h));
    if (!std::isnan(f)) REQUIRE(llama::f32_to_f16(f) == h);
    const float g = llama::bf16_to_f32(static_cast<uint16_t>(h));
    if (!std::isnan(g)) REQUIRE(llama::f32_to_bf16(g) == h);
  }
  CHECK(llama::f32_to_f16(65519.99f) == 0x7bff);         // rounds down to the largest f16
  CHECK(llama::f32_to_f16(65520.0f) == 0x7c00);          // the tie rounds to even: infinity
  CHECK(llama::f32_to_f16(std::ldexp(1.0f, -25)) == 0);  // half the smallest subnormal: even
  CHECK(llama::f32_to_f16(std::ldexp(1.5f, -25)) == 1);
}

TEST_CASE("gguf blocks: quantizers and narrowing equal ggml's reference ones", "[gguf][kernels]") {
  for (const auto& c : crosscheck()["quantize"]) {
    const std::string type = c["type"];
    INFO(type);
    const auto x = seeded_floats(c["seed"], c["values"]);
    std::string h;
    if (type == "Q8_0") {
      std::vector<llama::BlockQ8_0> b(x.size() / 32);
      llama::quantize_q8_0(x, b);
      h = fnv64(b);
    } else if (type == "Q4_0") {
      std::vector<llama::BlockQ4_0> b(x.size() / 32);
      llama::quantize_q4_0(x, b);
      h = fnv64(b);
    } else {
      std::vector<uint16_t> b;
      for (float v : x) b.push_back(type == "F16" ? llama::f32_to_f16(v) : llama::f32_to_bf16(v));
      h = fnv64(b);
    }
    CHECK(h == c["fnv64"].get<std::string>());
  }
}

TEST_CASE("f16 and bf16 against their definitions: exact widening, nearest narrowing, ties to even",
          "[gguf][kernels]") {
  for (uint32_t h = 0; h < 65536; ++h) {
    const double want = f16_value(static_cast<uint16_t>(h));
    const float got = llama::f16_to_f32(static_cast<uint16_t>(h));
    if (std::isnan(want)) {
      REQUIRE(std::isnan(got));
    } else {
      REQUIRE(static_cast<double>(got) == want);
      REQUIRE(std::signbit(got) == ((h & 0x8000) != 0));
    }
  }
  std::vector<uint16_t> f16_sorted, bf16_sorted;  // positive finite patterns, ascending
  for (uint16_t h = 0; h < 0x7c00; ++h) f16_sorted.push_back(h);
  for (uint16_t h = 0; h < 0x7f80; ++h) bf16_sorted.push_back(h);
  const auto bf16_value = [](uint16_t h) { return static_cast<double>(llama::bf16_to_f32(h)); };
  // Every 4099th pattern, plus the halfway points around each f16 and bf16 value.
  std::vector<float> xs;
  for (uint64_t b = 0; b < (uint64_t{1} << 32); b += 4099)
    xs.push_back(from_bits(static_cast<uint32_t>(b)));
  for (uint16_t h = 0; h < 0x7c00; ++h) {
    const double mid = (f16_value(h) + f16_value(static_cast<uint16_t>(h + 1))) / 2;
    xs.push_back(static_cast<float>(mid));  // exact in f32
    xs.push_back(-static_cast<float>(mid));
  }
  for (uint32_t h = 0; h < 0x7f80; ++h)
    xs.push_back(from_bits((h << 16) | 0x8000u));  // bf16 halfway
  for (float x : {0.0f, -0.0f, 65504.0f, 65519.99f, 65520.0f, 1e-8f, 5.96e-8f, 2.98e-8f, 2.99e-8f,
                  std::numeric_limits<float>::max(), INFINITY, -INFINITY}) {
    xs.push_back(x);
  }
  for (float x : xs) {
    INFO("x = " << x << " bits " << std::hex << bits_of(x));
    if (std::isnan(x)) {
      CHECK(std::isnan(llama::f16_to_f32(llama::f32_to_f16(x))));
      CHECK(std::isnan(llama::bf16_to_f32(llama::f32_to_bf16(x))));
      continue;
    }
    if (std::isinf(x)) {
      CHECK(llama::f32_to_f16(x) == (x > 0 ? 0x7c00 : 0xfc00));
      CHECK(llama::f32_to_bf16(x) == (x > 0 ? 0x7f80 : 0xff80));
      continue;
    }
    REQUIRE(llama::f32_to_f16(x) == nearest(x, f16_sorted, f16_value));
    REQUIRE(llama::f32_to_bf16(x) == nearest(x, bf16_sorted, bf16_value));
  }
}

TEST_CASE("gguf blocks: every block tensor of the shared files dequantizes as ggml's does",
          "[gguf][kernels]") {
  std::map<std::string, gguf::File> files;
  size_t checked = 0;
  for (const auto& c : crosscheck()["files"]) {
    const std::string file = c["file"], name = c["tensor"], type = c["type"];
    INFO(file << " " << name);
    if (!files.count(file)) files.emplace(file, gguf::File::open(llama::test::model_path(file)));
    const gguf::Tensor* t = files.at(file).find_tensor(name);
    REQUIRE(t != nullptr);
    REQUIRE(gguf::type_name(t->type) == type);
    CHECK(fnv64(dequantize(type, t->data, static_cast<size_t>(t->elements))) ==
          c["fnv64"].get<std::string>());
    ++checked;
  }
  CHECK(checked >= 160);  // the stories1M block files and the rand-k ones
}

TEST_CASE("gguf blocks: our quantizers rewrite stories1M.f32 as llama-quantize did",
          "[gguf][kernels]") {
  const auto f32 = gguf::File::open(llama::test::model_path("gguf/stories1M.f32.gguf"));
  for (const char* target :
       {"gguf/stories1M.f16.gguf", "gguf/stories1M.q8_0.gguf", "gguf/stories1M.q4_0.gguf"}) {
    const auto q = gguf::File::open(llama::test::model_path(target));
    size_t compared = 0;
    for (const gguf::Tensor& t : q.tensors()) {
      INFO(target << " " << t.name);
      const gguf::Tensor* src = f32.find_tensor(t.name);
      REQUIRE(src != nullptr);
      REQUIRE(src->type == 0);
      const std::span<const float> x = {reinterpret_cast<const float*>(src->data.data()),
                                        static_cast<size_t>(src->elements)};
      std::vector<std::byte> out(t.data.size());
      const auto type = static_cast<gguf::TensorType>(t.type);
      if (type == gguf::TensorType::F32) continue;  // norms stay f32
      if (type == gguf::TensorType::Q8_0) {
        llama::quantize_q8_0(x, {reinterpret_cast<llama::BlockQ8_0*>(out.data()), x.size() / 32});
      } else if (type == gguf::TensorType::Q4_0) {
        llama::quantize_q4_0(x, {reinterpret_cast<llama::BlockQ4_0*>(out.data()), x.size() / 32});
      } else {
        REQUIRE(type == gguf::TensorType::F16);
        for (size_t i = 0; i < x.size(); ++i) {
          const uint16_t h = llama::f32_to_f16(x[i]);
          std::memcpy(out.data() + 2 * i, &h, 2);
        }
      }
      CHECK(std::memcmp(out.data(), t.data.data(), out.size()) == 0);
      ++compared;
    }
    CHECK(compared >= 37);  // every matrix: 7 per layer, the embedding (and output when untied)
  }
}

namespace {
__attribute__((target("f16c"))) float f16c_widen(uint16_t v) { return _cvtsh_ss(v); }
__attribute__((target("f16c"))) uint16_t f16c_narrow(float v) {
  return static_cast<uint16_t>(_cvtss_sh(v, _MM_FROUND_TO_NEAREST_INT));
}
bool cpu_has_f16c() { return llama::cpu_features().f16c && llama::cpu_features().os_ymm; }
}  // namespace

TEST_CASE("half: f16 conversions equal the CPU's F16C; bf16 ties round to even", "[kernels]") {
  CHECK(llama::f32_to_bf16(std::bit_cast<float>(0x3f808000u)) == 0x3f80);  // tie, down to even
  CHECK(llama::f32_to_bf16(std::bit_cast<float>(0x3f818000u)) == 0x3f82);  // tie, up to even
  CHECK(llama::f32_to_bf16(std::bit_cast<float>(0x3f808001u)) == 0x3f81);  // above the tie
  CHECK(llama::f32_to_f16(65519.0f) == 0x7bff);
  CHECK(llama::f32_to_f16(65520.0f) == 0x7c00);                   // rounds to infinity
  CHECK(llama::f32_to_f16(std::ldexp(1.0f, -25)) == 0x0000);      // subnormal tie to even
  CHECK(llama::f32_to_f16(std::ldexp(3.0f, -25)) == 0x0002);
  CHECK(llama::f16_to_f32(0x0001) == std::ldexp(1.0f, -24));
  if (!cpu_has_f16c()) {
    WARN("this CPU lacks F16C: the comparison with the hardware conversion did not run");
    return;
  }
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    const float f = llama::f16_to_f32(static_cast<uint16_t>(h));
    const float want = f16c_widen(static_cast<uint16_t>(h));
    REQUIRE(((std::isnan(f) && std::isnan(want)) ||
             std::bit_cast<uint32_t>(f) == std::bit_cast<uint32_t>(want)));
  }
  Rng rng{11};
  for (int i = 0; i < 1000000; ++i) {
    const auto r = static_cast<uint32_t>(rng.next() >> 32);
    // Exponents around f16's range (subnormals to overflow), every mantissa.
    const float f = std::bit_cast<float>((r & 0x807fffffu) | ((100u + (r >> 23) % 60u) << 23));
    REQUIRE(llama::f32_to_f16(f) == f16c_narrow(f));
  }
}
