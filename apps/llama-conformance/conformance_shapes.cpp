// Random checkpoints in the generated shapes, and the token sequences the checks feed.
#include "conformance_shapes.hpp"

#include <cstdlib>
#include <cstring>
#include <fstream>

#include "conformance_data.hpp"
#include "llama/error.hpp"
#include "llama/sampler.hpp"
#include "llama/tokenizers/llama2c_tokenizer.hpp"

namespace llama::conformance {
namespace {

// f32 values a legacy checkpoint of this header holds after the header.
int64_t checkpoint_floats(const std::vector<int32_t>& h) {
  const int64_t dim = h[0], hidden = h[1], layers = h[2], heads = h[3], kv_heads = h[4];
  const int64_t vocab = std::abs(h[5]), seq = h[6];
  const int64_t head_size = dim / heads, kv_dim = kv_heads * head_size;
  int64_t n = vocab * dim +
              layers * (2 * dim + 2 * dim * dim + 2 * kv_dim * dim + 3 * dim * hidden) + dim +
              seq * head_size;  // the two half-size rope tables
  if (h[5] < 0) n += vocab * dim;
  return n;
}

template <typename T>
void put(std::ofstream& out, T v) {
  out.write(reinterpret_cast<const char*>(&v), sizeof v);
}

}  // namespace

std::vector<Shape> generated_shapes() {
  return {
      {"multi-head", {32, 64, 2, 4, 4, 64, 16}},
      {"grouped-query", {48, 96, 2, 6, 2, 96, 16}},
      {"multi-query", {32, 80, 2, 4, 1, 64, 16}},
      {"separate-classifier", {32, 64, 2, 4, 2, -64, 16}},
      {"odd-sizes", {20, 36, 1, 2, 1, 37, 9}},
  };
}

std::string write_random_checkpoint(const ConformanceData& data, const Shape& shape,
                                    uint64_t seed) {
  const std::string path =
      data.scratch("conformance-" + shape.name + "-" + std::to_string(seed) + ".bin");
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  for (int32_t v : shape.header) put(out, v);
  Rng rng(seed);
  const int64_t n = checkpoint_floats(shape.header);
  for (int64_t i = 0; i < n; ++i) put(out, rng.next_f32() - 0.5f);
  out.close();
  if (!out) throw Error(path + ": cannot write a generated checkpoint");
  return path;
}

std::vector<int32_t> test_tokens(const Config& config, int64_t count) {
  std::vector<int32_t> tokens = {kBosToken};
  for (int64_t i = 1; i < count; ++i) {
    tokens.push_back(static_cast<int32_t>((i * 7919 + 13) % config.vocab_size));
  }
  return tokens;
}

}  // namespace llama::conformance
