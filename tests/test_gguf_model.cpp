// GGUF files as the core's Model: the block dtypes in the dtype table, their
// exact dequantization through dequantize_rows, llama.cpp's shared files as
// Configs and in-place views (stories1M.f32.gguf is stories1M.bin's weights),
// the embedded tokenizer, special ids and chat template, and every backend
// running the block tensors in place.
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>

#include "gguf_tiny.hpp"
#include "llama/backend.hpp"
#include "llama/error.hpp"
#include "llama/formats/gguf_model.hpp"
#include "llama/formats/llama2c_checkpoint.hpp"
#include "llama/kernels/numbers/dequantize.hpp"
#include "llama/kernels/numbers/half.hpp"
#include "test_support.hpp"

using namespace llama;

namespace {

std::vector<float> values(const Tensor& t) {
  std::vector<float> v(static_cast<size_t>(t.elements()));
  dequantize(t, v);
  return v;
}

// Every distinct tensor of `m` in ModelWeights::for_each order.
std::vector<Tensor> tensors(const Model& m) {
  std::vector<Tensor> out;
  m.weights.for_each([&](const Tensor& t) { out.push_back(t); });
  return out;
}

std::string write_tiny(const test::TinyLlama& spec, const std::string& name) {
  const std::string path = test::temp_path(name);
  test::write_file(path, test::tiny_llama_gguf(spec));
  return path;
}

}  // namespace

TEST_CASE("gguf model: the block dtypes in the core's dtype table", "[gguf][tensor]") {
  CHECK(kDTypeCount == 14);
  CHECK(std::string(to_string(DType::block_q8_0)) == "block_q8_0");
  CHECK(dtype_info(DType::block_q8_0).block_values == 32);
  CHECK(dtype_info(DType::block_q8_0).block_bytes == 34);
  CHECK(dtype_info(DType::q4_0).block_bytes == 18);
  CHECK(dtype_info(DType::q4_k).block_values == 256);
  CHECK(dtype_info(DType::q4_k).block_bytes == 144);
  CHECK(dtype_info(DType::q6_k).block_bytes == 210);
  CHECK(dtype_info(DType::q4_1).block_bytes == 20);
  CHECK(dtype_info(DType::q5_0).block_bytes == 22);
  CHECK(dtype_info(DType::q5_1).block_bytes == 24);
  CHECK(dtype_info(DType::q5_1).block_values == 32);
  CHECK(dtype_info(DType::q5_k).block_values == 256);
  CHECK(dtype_info(DType::q5_k).block_bytes == 176);
  CHECK_FALSE(dtype_info(DType::q6_k).is_float);
  CHECK(DTypeSet::all().contains(DType::q6_k));

  alignas(4) std::byte bytes[2 * 144] = {};
  const Tensor t = Tensor::view("w", DType::q4_k, {2, 256}, bytes);
  CHECK(t.row_bytes(256) == 144);
  CHECK(t.describe() == "w q4_k [2x256]");
  CHECK_THROWS_WITH(Tensor::view("w", DType::q4_k, {2, 128}, std::span(bytes).first(144)),
                    Catch::Contains("tensor w: rows of 128 values are not whole q4_k blocks"));
  CHECK_THROWS_WITH(Tensor::view("w", DType::q4_k, {3, 256}, bytes),
                    Catch::Contains("needs 432 bytes, has 288"));
  // Block kernels read 2-byte aligned blocks; dequantize_rows refuses others by name.
  const Tensor odd = Tensor::view("odd", DType::q4_0, {32}, std::span(bytes).subspan(1, 18));
  std::vector<float> out(32);
  CHECK_THROWS_WITH(dequantize(odd, out),
                    Catch::Contains("tensor odd: Q4_0 blocks are not 2-byte"));
}

TEST_CASE("gguf model: stories1M.f32.gguf is stories1M.bin, read in place", "[gguf]") {
  const gguf::GgufModel g = gguf::open_model(test::model_path("gguf/stories1M.f32.gguf"));
  const Checkpoint ck = Checkpoint::open(test::model_path("stories1M.bin"));
  const Config& c = g.model.config;
  const Config& b = ck.config();
  CHECK(g.version == 3);
  CHECK(c.dim == b.dim);
  CHECK(c.hidden_dim == b.hidden_dim);
  CHECK(c.n_layers == b.n_layers);
  CHECK(c.n_heads == b.n_heads);
  CHECK(c.n_kv_heads == b.n_kv_heads);
  CHECK(c.head_dim == b.head_dim);
  CHECK(c.vocab_size == b.vocab_size);
  CHECK(c.context_length == 128);
  CHECK(c.seq_len == 128);
  CHECK(c.rope_layout == RopeLayout::interleaved);
  CHECK(c.bos_id == 1);
  CHECK(c.eos_ids == std::vector<int32_t>{2});
  CHECK(c.norm_eps == Approx(1e-5));
  // llama.cpp's converter writes the classifier stories1M.bin shares.
  CHECK_FALSE(c.shared_classifier);

  const std::vector<Tensor> ours = tensors(g.model);
  std::vector<Tensor> theirs = tensors(ck.model());
  if (b.shared_classifier) theirs.push_back(ck.model().weights.classifier);
  REQUIRE(ours.size() == theirs.size());
  for (size_t i = 0; i < ours.size(); ++i) {
    INFO(ours[i].name << " vs " << theirs[i].name);
    CHECK(ours[i].dtype == DType::f32);
    CHECK(ours[i].shape == theirs[i].shape);
    CHECK(values(ours[i]) == values(theirs[i]));
  }
  // In place: the views point into the file's mapping, which they keep alive.
  const auto* base = static_cast<const std::byte*>(g.model.weights.storage.get());
  CHECK(base != nullptr);
  CHECK(g.model.weights.layers[2].w2.data.data() > base);
}

TEST_CASE("gguf model: F16, Q8_0 and Q4_0 files dequantize to the f32 file's values",
          "[gguf][kernels]") {
  const gguf::GgufModel f32 = gguf::open_model(test::model_path("gguf/stories1M.f32.gguf"));
  const std::vector<Tensor> exact = tensors(f32.model);
  for (const char* file : {"stories1M.f16.gguf", "stories1M.q8_0.gguf", "stories1M.q4_0.gguf"}) {
    const gguf::GgufModel g = gguf::open_model(test::model_path(std::string("gguf/") + file));
    const std::vector<Tensor> ts = tensors(g.model);
    REQUIRE(ts.size() == exact.size());
    size_t blocks_checked = 0;
    for (size_t i = 0; i < ts.size(); ++i) {
      INFO(file << ": " << ts[i].describe());
      const std::vector<float> d = values(ts[i]);
      const std::vector<float> x = values(exact[i]);
      REQUIRE(d.size() == x.size());
      switch (ts[i].dtype) {
        case DType::f32:
          CHECK(d == x);
          break;
        case DType::f16:
          // llama-quantize narrows to the nearest f16.
          for (size_t k = 0; k < d.size(); ++k) REQUIRE(d[k] == f16_to_f32(f32_to_f16(x[k])));
          break;
        case DType::block_q8_0:
        case DType::q4_0: {
          // Per block of 32: within half a step of max|x| / 127 (Q8_0; its f16
          // scale adds up to 127 x 2^-11 of a step), within one step of
          // max|x| / 8 (Q4_0: the far end is clamped to code 15).
          const bool q8 = ts[i].dtype == DType::block_q8_0;
          for (size_t b = 0; b < d.size(); b += 32, ++blocks_checked) {
            float amax = 0;
            for (size_t k = b; k < b + 32; ++k) amax = std::max(amax, std::fabs(x[k]));
            const float bound = q8 ? amax / 127 * 0.57f + 1e-7f : amax / 8 * 1.01f + 1e-7f;
            for (size_t k = b; k < b + 32; ++k) REQUIRE(std::fabs(d[k] - x[k]) <= bound);
          }
          break;
        }
        default:
          FAIL("unexpected dtype");
      }
    }
    if (std::string(file) != "stories1M.f16.gguf") CHECK(blocks_checked > 1000);
    // A row range is the same values as the whole tensor's rows.
    const Tensor& w2 = g.model.weights.layers[3].w2;
    const std::vector<float> all = values(w2);
    std::vector<float> rows(static_cast<size_t>(2 * w2.cols()));
    dequantize_rows(w2, 5, 7, rows);
    CHECK(std::equal(rows.begin(), rows.end(), all.begin() + 5 * w2.cols()));
  }
}

TEST_CASE("gguf model: rand-k's K-quant tensors as q4_k and q6_k views", "[gguf][kernels]") {
  const gguf::GgufModel g = gguf::open_model(test::model_path("gguf/rand-k.q4_k_m.gguf"));
  CHECK(g.model.weights.layers[0].wv.dtype == DType::q4_k);
  CHECK(g.model.weights.layers[1].wv.dtype == DType::q6_k);
  CHECK(g.model.weights.dtypes().contains(DType::q4_k));
  for (const Tensor* t : {&g.model.weights.layers[0].wv, &g.model.weights.layers[1].wv}) {
    INFO(t->describe());
    const std::vector<float> all = values(*t);
    std::vector<float> rows(static_cast<size_t>(3 * t->cols()));
    dequantize_rows(*t, t->rows() - 3, t->rows(), rows);
    CHECK(std::equal(rows.begin(), rows.end(), all.end() - 3 * t->cols()));
    double sum = 0;
    for (float v : all) sum += std::fabs(v);
    CHECK(sum > 0);  // random weights: not all zero
  }
}

TEST_CASE("gguf model: the embedded tokenizer, special ids and chat template", "[gguf]") {
  const gguf::GgufModel g = gguf::open_model(test::model_path("gguf/stories1M.q8_0.gguf"));
  REQUIRE(g.tokenizer != nullptr);
  CHECK(g.tokenizer->vocab_size() == 2048);
  CHECK(g.tokenizer->encode("Once upon a time", {}) == std::vector<int32_t>{1, 413, 437, 261, 386});
  CHECK(g.chat_template.source.empty());

  test::TinyLlama spec;
  spec.edit = [](gguf::Writer& w) {
    w.set_string("tokenizer.chat_template", "{{ bos_token }}{{ messages[0]['content'] }}");
    w.set_u32("tokenizer.ggml.eos_token_id", 5);
    w.set_u32("tokenizer.ggml.eot_token_id", 7);
  };
  const std::string path = write_tiny(spec, "chat.gguf");
  const gguf::GgufModel t = gguf::open_model(path);
  CHECK(t.model.config.bos_id == 1);
  CHECK(t.model.config.eos_ids == std::vector<int32_t>{5, 7});
  CHECK(t.chat_template.source == "{{ bos_token }}{{ messages[0]['content'] }}");
  CHECK(t.chat_template.bos_token == t.tokenizer->piece(1));
  CHECK(t.chat_template.eos_token == t.tokenizer->piece(5));
  CHECK(t.chat_template.origin.find("chat.gguf") != std::string::npos);
  CHECK(gguf::is_gguf(path));
  CHECK_FALSE(gguf::is_gguf(test::model_path("stories1M.bin")));
  CHECK_FALSE(gguf::is_gguf(test::temp_path("no-such-file")));
}

TEST_CASE("gguf model: special ids outside the vocabulary are refused", "[gguf][robustness]") {
  for (const char* key : {"tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id",
                          "tokenizer.ggml.eot_token_id"}) {
    INFO(key);
    test::TinyLlama spec;
    spec.edit = [&](gguf::Writer& w) { w.set_u32(key, 300); };
    const std::string path = write_tiny(spec, "bad-id.gguf");
    try {
      (void)gguf::open_model(path);
      FAIL("accepted");
    } catch (const Error& e) {
      const std::string msg = e.what();
      CHECK(msg.rfind(path + ": " + key + " 300 is outside the vocabulary of 300", 0) == 0);
      CHECK(msg.find('\n') == std::string::npos);
    }
  }
}

// An exact f32 copy of `in` (every tensor dequantized): the oracle the
// in-place run is checked against.
Model f32_copy(const Model& in, std::vector<std::vector<float>>& store) {
  // The views point into the inner vectors' buffers, which stay put as `store` grows.
  auto f32 = [&](const Tensor& t) {
    store.push_back(values(t));
    return Tensor::f32_view(t.name, t.shape, store.back());
  };
  Model out = in;
  ModelWeights& w = out.weights;
  w.token_embedding = f32(in.weights.token_embedding);
  w.final_norm = f32(in.weights.final_norm);
  w.classifier = in.weights.tied() ? w.token_embedding : f32(in.weights.classifier);
  for (size_t l = 0; l < w.layers.size(); ++l) {
    for (Tensor LayerWeights::*member : kLayerTensors) {
      w.layers[l].*member = f32(in.weights.layers[l].*member);
    }
  }
  return out;
}

TEST_CASE("gguf model: every backend runs the file's tensors in place", "[gguf]") {
  // F16 matrices are widened exactly: the f32 copy's logits to f32 rounding.
  // Q4_0 products are llama.cpp's (activations quantized per block of 32):
  // near the copy's, and every backend's equal to the reference's.
  for (gguf::TensorType type : {gguf::TensorType::F16, gguf::TensorType::Q4_0}) {
    for (bool tied : {false, true}) {
      INFO("type " << static_cast<int>(type) << " tied " << tied);
      test::TinyLlama spec;
      spec.matrix_type = type;
      spec.tied = tied;
      const gguf::GgufModel g = gguf::open_model(write_tiny(spec, "in-place.gguf"));
      const DType dtype = g.model.weights.layers[0].wq.dtype;
      CHECK(dtype == (type == gguf::TensorType::F16 ? DType::f16 : DType::q4_0));
      CHECK(g.model.weights.tied() == tied);
      CHECK((g.model.weights.classifier.data.data() ==
             g.model.weights.token_embedding.data.data()) == tied);
      std::vector<std::vector<float>> store;
      const Model exact = f32_copy(g.model, store);
      const std::vector<int32_t> tokens{7, 38, 69, 100, 131, 162};
      auto logits = [&](const Model& m, const std::string& name, bool batch) {
        auto b = test::make_backend(name);
        CHECK(b->supported_dtypes().contains(dtype));
        b->prepare(m);
        std::vector<std::vector<float>> out;  // f32 [positions][vocab]
        const auto vocab = static_cast<size_t>(m.config.vocab_size);
        if (batch) {  // the prompt path (matrix-matrix products)
          const auto all = b->forward_batch(tokens, 0, true);
          for (size_t p = 0; p < tokens.size(); ++p) {
            out.emplace_back(all.begin() + p * vocab, all.begin() + (p + 1) * vocab);
          }
        } else {
          for (size_t p = 0; p < tokens.size(); ++p) {
            const auto l = b->forward(tokens[p], static_cast<int64_t>(p));
            out.emplace_back(l.begin(), l.end());
          }
        }
        return out;
      };
      const auto copy = logits(exact, "reference", false);
      const auto want = logits(g.model, "reference", false);
      // Q4_0: the int8 activations move the logits (measured: at most 1.3e-2).
      const double near = type == gguf::TensorType::F16 ? 1e-5 : 2e-2;
      for (size_t p = 0; p < tokens.size(); ++p) {
        CHECK(test::relative_diff(want[p], copy[p]) <= near);
      }
      for (const char* name : {"reference", "blas", "graph"}) {
        for (bool batch : {false, true}) {
          INFO(name << (batch ? " forward_batch" : " forward"));
          const auto got = logits(g.model, name, batch);
          for (size_t p = 0; p < tokens.size(); ++p) {
            INFO("position " << p);
            CHECK(test::relative_diff(got[p], want[p]) <= 1e-5);
          }
        }
      }
    }
  }
}
