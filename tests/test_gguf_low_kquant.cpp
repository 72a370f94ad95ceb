// Q3_K and Q2_K products with q8_K activations (kernels/products/
// gguf_kquant.hpp): against a plain integer loop over codes unpacked
// as ggml's dequantize_row_q3_K / q2_K walk them (exactly, where the float
// steps are exact, else within rounding of the exact sum), the VNNI kernel
// against the portable loops bit for bit over odd row ranges and batches of
// every size, and the refusals.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <random>

#include "llama/error.hpp"
#include "llama/kernels/dispatch/kernel_set.hpp"
#include "llama/kernels/numbers/half.hpp"
#include "llama/kernels/numbers/low_kquant_blocks.hpp"
#include "llama/kernels/products/gguf_kquant.hpp"

using llama::BlockKind;
using llama::BlockMatrix;

namespace {

struct Q8K {
  std::vector<int8_t> values;  // i8 [n]
  std::vector<float> d;        // f32 [n / 256]
};

Q8K quantize(const std::vector<float>& x) {
  Q8K q{std::vector<int8_t>(x.size()), std::vector<float>(x.size() / 256)};
  llama::quantize_activations_q8_k(x, q.values, q.d);
  return q;
}

// Offsets of a block's f16 scales (Q3_K: d; Q2_K: d, dmin).
std::vector<size_t> scale_fields(BlockKind kind) {
  return kind == BlockKind::q3_k ? std::vector<size_t>{108} : std::vector<size_t>{80, 82};
}

// Random blocks: random bytes (every code, scale, min and high bit occurs)
// with f16 scales of moderate size and either sign.
std::vector<std::byte> random_blocks(BlockKind kind, int64_t rows, int64_t cols, uint32_t seed) {
  const BlockMatrix shape{{}, rows, cols, kind};
  std::vector<std::byte> b(static_cast<size_t>(rows * shape.row_bytes()));
  std::mt19937 rng(seed);
  for (auto& x : b) x = static_cast<std::byte>(rng());
  const auto bb = static_cast<size_t>(llama::block_bytes(kind));
  for (size_t at = 0; at < b.size(); at += bb) {
    for (size_t f : scale_fields(kind)) {
      const uint16_t h = llama::f32_to_f16(std::ldexp(static_cast<float>(rng() % 1000 + 1), -12) *
                                           (rng() % 2 ? 1.0f : -1.0f));
      std::memcpy(b.data() + at + f, &h, 2);
    }
  }
  return b;
}

std::vector<float> random_vector(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = dist(rng);
  return v;
}

// A block as integers, walked as ggml's dequantize_row_q3_K / q2_K do:
// value = d * scale[v / 16] * code[v] - dmin * min[v / 16].
struct IntBlock {
  int32_t code[256];
  int32_t scale[16];
  int32_t min[16] = {};
  float d, dmin = 0;
};

IntBlock int_block(BlockKind kind, const std::byte* p) {
  IntBlock o{};
  if (kind == BlockKind::q3_k) {
    llama::BlockQ3_K b;
    std::memcpy(&b, p, sizeof b);
    o.d = llama::f16_to_f32(b.d);
    uint32_t aux[4];
    std::memcpy(aux, b.scales, 12);
    const uint32_t tmp = aux[2];
    aux[2] = ((aux[0] >> 4) & 0x0f0f0f0f) | (((tmp >> 4) & 0x03030303) << 4);
    aux[3] = ((aux[1] >> 4) & 0x0f0f0f0f) | (((tmp >> 6) & 0x03030303) << 4);
    aux[0] = (aux[0] & 0x0f0f0f0f) | (((tmp >> 0) & 0x03030303) << 4);
    aux[1] = (aux[1] & 0x0f0f0f0f) | (((tmp >> 2) & 0x03030303) << 4);
    int8_t sc[16];
    std::memcpy(sc, aux, 16);
    for (int s = 0; s < 16; ++s) o.scale[s] = sc[s] - 32;
    int y = 0, m = 1;
    for (int n = 0; n < 2; ++n) {
      for (int j = 0; j < 4; ++j, m <<= 1) {
        for (int l = 0; l < 32; ++l) {
          o.code[y++] = ((b.qs[32 * n + l] >> (2 * j)) & 3) - ((b.hmask[l] & m) ? 0 : 4);
        }
      }
    }
    return o;
  }
  llama::BlockQ2_K b;
  std::memcpy(&b, p, sizeof b);
  o.d = llama::f16_to_f32(b.d);
  o.dmin = llama::f16_to_f32(b.dmin);
  for (int s = 0; s < 16; ++s) {
    o.scale[s] = b.scales[s] & 15;
    o.min[s] = b.scales[s] >> 4;
  }
  int y = 0;
  for (int n = 0; n < 2; ++n) {
    for (int j = 0; j < 4; ++j) {
      for (int l = 0; l < 32; ++l) o.code[y++] = (b.qs[32 * n + l] >> (2 * j)) & 3;
    }
  }
  return o;
}

// A row's product as plain integer sums per block, combined in double.
double int_loop_dot(BlockKind kind, const std::byte* row, int64_t cols, const Q8K& x, int64_t t,
                    double* magnitude) {
  double sum = 0, mag = 0;
  for (int64_t b = 0; b < cols / 256; ++b) {
    const IntBlock w = int_block(kind, row + b * llama::block_bytes(kind));
    int64_t scaled = 0, mins = 0;
    for (int j = 0; j < 256; ++j) {
      const int32_t q = x.values[static_cast<size_t>(t * cols + 256 * b + j)];
      scaled += int64_t{w.scale[j / 16]} * w.code[j] * q;
      mins += int64_t{w.min[j / 16]} * q;
    }
    const double d8 = x.d[static_cast<size_t>(t * cols / 256 + b)];
    sum += d8 * w.d * static_cast<double>(scaled) - d8 * w.dmin * static_cast<double>(mins);
    mag += std::fabs(d8 * w.d * static_cast<double>(scaled)) +
           std::fabs(d8 * w.dmin * static_cast<double>(mins));
  }
  *magnitude = mag;
  return sum;
}

std::vector<llama::KernelSet> kernel_sets() {
  std::vector<llama::KernelSet> k{llama::KernelSet::portable};
  if (llama::kernel_set_available(llama::KernelSet::avx512_vnni)) {
    k.push_back(llama::KernelSet::avx512_vnni);
  } else {
    WARN("this CPU has no AVX-512 VNNI: only the portable Q3_K/Q2_K kernels are tested");
  }
  return k;
}

llama::Q8View vector_of(const Q8K& x, int64_t cols, int64_t t) {
  return {{x.values.data() + t * cols, static_cast<size_t>(cols)},
          {x.d.data() + t * cols / 256, static_cast<size_t>(cols / 256)},
          256};
}

}  // namespace

TEST_CASE("Q3_K, Q2_K q8_K products: exactly the integer loop where the float steps are exact",
          "[gguf][kernels][q8k]") {
  // d = dmin = 1 and x's d 1: every product and sum of the definition is an
  // exact float, so the result is the integer loop's.
  for (BlockKind kind : {BlockKind::q3_k, BlockKind::q2_k}) {
    INFO(llama::to_string(kind));
    auto bytes = random_blocks(kind, 3, 512, 7);
    const uint16_t one = llama::f32_to_f16(1.0f);
    const auto bb = static_cast<size_t>(llama::block_bytes(kind));
    for (size_t at = 0; at < bytes.size(); at += bb) {
      for (size_t f : scale_fields(kind)) std::memcpy(bytes.data() + at + f, &one, 2);
    }
    const BlockMatrix w{bytes, 3, 512, kind};
    std::vector<float> xf(512);
    for (size_t i = 0; i < xf.size(); ++i) {
      xf[i] = static_cast<float>(static_cast<int>(i % 255) - 127);
    }
    const Q8K x = quantize(xf);
    REQUIRE(x.d[0] == 1.0f);
    for (llama::KernelSet k : kernel_sets()) {
      std::vector<float> out(3);
      llama::kquant_q8_k_matvec_rows(out, w, vector_of(x, 512, 0), 0, 3, k);
      for (int64_t r = 0; r < 3; ++r) {
        double mag;
        CHECK(out[static_cast<size_t>(r)] ==
              static_cast<float>(int_loop_dot(kind, w.row(r), 512, x, 0, &mag)));
      }
    }
  }
}

TEST_CASE("Q3_K, Q2_K q8_K products: within rounding of the exact sum, VNNI the portable bits",
          "[gguf][kernels][q8k]") {
  const std::vector<llama::KernelSet> kernels = kernel_sets();
  for (BlockKind kind : {BlockKind::q3_k, BlockKind::q2_k}) {
    INFO(llama::to_string(kind));
    constexpr int64_t rows = 37, cols = 256 * 6, n = 11;
    const auto bytes = random_blocks(kind, rows, cols, 11);
    const BlockMatrix w{bytes, rows, cols, kind};
    const Q8K x = quantize(random_vector(n * cols, 5));
    std::vector<std::vector<float>> decode(n, std::vector<float>(rows));
    for (int64_t t = 0; t < n; ++t) {
      llama::kquant_q8_k_matvec_rows(decode[t], w, vector_of(x, cols, t), 0, rows,
                                     llama::KernelSet::portable);
      for (int64_t r = 0; r < rows; ++r) {
        double mag;
        const double exact = int_loop_dot(kind, w.row(r), cols, x, t, &mag);
        CHECK(std::fabs(decode[t][r] - exact) <= 64 * 6e-8 * mag);
      }
    }
    for (llama::KernelSet k : kernels) {
      INFO(llama::to_string(k));
      for (int64_t t = 0; t < n; ++t) {
        // Decode over an odd row range: each row the bits of the whole range's.
        std::vector<float> out(rows - 3);
        llama::kquant_q8_k_matvec_rows(out, w, vector_of(x, cols, t), 3, rows, k);
        for (int64_t r = 3; r < rows; ++r) CHECK(out[r - 3] == decode[t][r]);
      }
      for (int64_t m = 1; m <= n; ++m) {  // batches of 1..11 vectors: passes of 8 and the rest
        const llama::Q8BatchView b{{x.values.data(), static_cast<size_t>(m * cols)},
                                   {x.d.data(), static_cast<size_t>(m * cols / 256)},
                                   cols,
                                   256};
        std::vector<float> out(static_cast<size_t>(m * rows), -1.0f);
        llama::kquant_q8_k_matmat_rows(out, rows, w, b, 2, rows - 1, k);
        for (int64_t t = 0; t < m; ++t) {
          for (int64_t r = 2; r < rows - 1; ++r) CHECK(out[t * rows + r] == decode[t][r]);
        }
      }
    }
  }
}

TEST_CASE("Q3_K, Q2_K q8_K products: other weights and mismatched inputs are refused",
          "[gguf][kernels][q8k]") {
  const auto bytes = random_blocks(BlockKind::q2_k, 2, 256, 3);
  const BlockMatrix w{bytes, 2, 256, BlockKind::q2_k};
  std::vector<int8_t> v(512);
  std::vector<float> d(2), out(2);
  const auto portable = llama::KernelSet::portable;
  CHECK_THROWS_AS(llama::kquant_q8_k_matvec_rows(out, w, {v, d, 256}, 0, 2, portable),
                  llama::Error);
  CHECK_THROWS_AS(llama::kquant_q8_k_matvec_rows(
                      out, w, {std::span(v).first(256), std::span(d).first(1), 32}, 0, 2, portable),
                  llama::Error);
  const BlockMatrix q40{std::span(bytes).first(18), 1, 32, BlockKind::q4_0};
  CHECK_THROWS_AS(
      llama::kquant_q8_k_matvec_rows(out, q40, {std::span(v).first(32), std::span(d).first(1), 32},
                                     0, 1, portable),
      llama::Error);
}
