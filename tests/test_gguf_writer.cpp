// The GGUF llama writer against llama.cpp's own files: stories1M.bin with
// tok2048.bin written as F32, F16, Q8_0 and Q4_0 holds the tensors and the
// vocabulary that convert-llama2c-to-ggml and llama-quantize wrote into the
// shared stories1M.*.gguf, byte for byte.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <sstream>

#include "convert_run.hpp"
#include "llama/error.hpp"
#include "llama/formats/gguf_file.hpp"
#include "llama/formats/gguf_llama.hpp"
#include "llama/formats/gguf_llama_writer.hpp"
#include "llama/formats/llama2c_checkpoint.hpp"
#include "llama/tokenizers/llama2c_tokenizer.hpp"
#include "test_support.hpp"

namespace gguf = llama::gguf;

namespace {

// stories1M.bin's tensors under GGUF's names, in convert-llama2c's order.
std::vector<gguf::F32Tensor> stories_tensors(const llama::Checkpoint& ck) {
  const llama::Config& c = ck.config();
  auto find = [&](const std::string& name) -> const llama::TensorInfo& {
    for (const auto& t : ck.tensors()) {
      if (t.name == name) return t;
    }
    FAIL("no tensor " << name);
    throw 0;
  };
  // Layer l of a flat [L, ...] tensor, with `shape` per layer.
  auto layer = [&](const std::string& gguf_name, const std::string& name, int64_t l,
                   std::vector<int64_t> shape) {
    const llama::TensorInfo& t = find(name);
    const int64_t per = static_cast<int64_t>(t.data.size()) / c.n_layers;
    const float* p = t.data.data() + l * per;
    return gguf::F32Tensor{gguf_name, std::move(shape),
                           [p, per] { return std::vector<float>(p, p + per); }};
  };
  auto whole = [&](const std::string& gguf_name, const std::string& name,
                   std::vector<int64_t> shape) {
    const llama::TensorInfo& t = find(name);
    return gguf::F32Tensor{gguf_name, std::move(shape),
                           [&t] { return std::vector<float>(t.data.begin(), t.data.end()); }};
  };
  const int64_t dim = c.dim, kv = c.kv_dim(), hidden = c.hidden_dim, V = c.vocab_size;
  std::vector<gguf::F32Tensor> out;
  out.push_back(whole("token_embd.weight", "token_embedding", {V, dim}));
  out.push_back(whole("output_norm.weight", "rms_final", {dim}));
  out.push_back(whole("output.weight", "token_embedding", {V, dim}));  // convert-llama2c unties
  for (int64_t l = 0; l < c.n_layers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    out.push_back(layer(p + "attn_q.weight", "wq", l, {dim, dim}));
    out.push_back(layer(p + "attn_k.weight", "wk", l, {kv, dim}));
    out.push_back(layer(p + "attn_v.weight", "wv", l, {kv, dim}));
    out.push_back(layer(p + "attn_output.weight", "wo", l, {dim, dim}));
    out.push_back(layer(p + "attn_norm.weight", "rms_att", l, {dim}));
    out.push_back(layer(p + "ffn_gate.weight", "w1", l, {hidden, dim}));
    out.push_back(layer(p + "ffn_down.weight", "w2", l, {dim, hidden}));
    out.push_back(layer(p + "ffn_up.weight", "w3", l, {hidden, dim}));
    out.push_back(layer(p + "ffn_norm.weight", "rms_ffn", l, {dim}));
  }
  return out;
}

std::vector<std::byte> write(const gguf::LlamaSpec& spec, const std::vector<gguf::F32Tensor>& t,
                             gguf::OutType type, gguf::LlamaWriteReport* report = nullptr) {
  std::stringstream s;
  const auto r = gguf::write_llama(spec, t, type, s, "out.gguf");
  if (report != nullptr) *report = r;
  const std::string str = s.str();
  std::vector<std::byte> b(str.size());
  std::memcpy(b.data(), str.data(), str.size());
  CHECK(static_cast<int64_t>(b.size()) == r.bytes);
  return b;
}

}  // namespace

TEST_CASE("gguf writer: stories1M as llama.cpp's convert and llama-quantize wrote it", "[gguf]") {
  const auto ck = llama::Checkpoint::open(llama::test::model_path("stories1M.bin"));
  const llama::Config& c = ck.config();
  const llama::Llama2cTokenizer tok(llama::test::model_path("tok2048.bin"), c.vocab_size);
  std::vector<std::string> pieces;
  std::vector<float> scores;
  for (int32_t i = 0; i < tok.vocab_size(); ++i) {
    pieces.emplace_back(tok.piece(i));
    scores.push_back(tok.score(i));
  }
  gguf::LlamaSpec spec;
  spec.dim = c.dim, spec.hidden_dim = c.hidden_dim, spec.n_layers = c.n_layers;
  spec.n_heads = c.n_heads, spec.n_kv_heads = c.n_kv_heads, spec.head_dim = c.head_size();
  spec.vocab_size = c.vocab_size, spec.context_length = c.seq_len;
  spec.vocabulary = gguf::vocabulary_from_llama2c(pieces, scores);
  const auto tensors = stories_tensors(ck);

  for (const auto& [type, file] : {std::pair{gguf::OutType::f32, "gguf/stories1M.f32.gguf"},
                                   std::pair{gguf::OutType::f16, "gguf/stories1M.f16.gguf"},
                                   std::pair{gguf::OutType::q8_0, "gguf/stories1M.q8_0.gguf"},
                                   std::pair{gguf::OutType::q4_0, "gguf/stories1M.q4_0.gguf"}}) {
    INFO(file);
    gguf::LlamaWriteReport report;
    const auto bytes = write(spec, tensors, type, &report);
    const auto ours = gguf::File::parse(bytes, "out.gguf", nullptr);
    const auto theirs = gguf::File::open(llama::test::model_path(file));
    // Same tensors, types and bytes.
    REQUIRE(ours.tensors().size() == theirs.tensors().size());
    for (const gguf::Tensor& t : theirs.tensors()) {
      INFO(t.name);
      const gguf::Tensor* o = ours.find_tensor(t.name);
      REQUIRE(o != nullptr);
      CHECK(o->shape == t.shape);
      CHECK(gguf::type_name(o->type) == gguf::type_name(t.type));
      REQUIRE(o->data.size() == t.data.size());
      CHECK(std::memcmp(o->data.data(), t.data.data(), t.data.size()) == 0);
    }
    // Same vocabulary and the llama keys llama.cpp reads.
    for (const char* key :
         {"tokenizer.ggml.tokens", "tokenizer.ggml.scores", "tokenizer.ggml.token_type"}) {
      INFO(key);
      const gguf::Value* a = ours.find(key);
      const gguf::Value* b = theirs.find(key);
      REQUIRE(a != nullptr);
      REQUIRE(b != nullptr);
      CHECK(a->count == b->count);
      CHECK(std::memcmp(a->bytes.data(), b->bytes.data(), b->bytes.size()) == 0);
    }
    for (const char* key :
         {"tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id",
          "tokenizer.ggml.unknown_token_id", "llama.embedding_length", "llama.feed_forward_length",
          "llama.block_count", "llama.attention.head_count", "llama.attention.head_count_kv",
          "llama.rope.dimension_count", "general.file_type"}) {
      INFO(key);
      if (std::string(key) == "general.file_type" && type == gguf::OutType::f32) continue;
      CHECK(ours.uint(key) == theirs.uint(key));
    }
    CHECK(ours.string("tokenizer.ggml.model") == "llama");
    // It reads back as the model it is.
    const auto m = gguf::read_llama(ours);
    CHECK(m.vocab_size == 2048);
    CHECK(m.context_length == 256);
    // Reported errors: zero for F32, small and positive otherwise.
    for (const auto& t : report.tensors) {
      INFO(t.name);
      if (type == gguf::OutType::f32 || t.type == "F32") {
        CHECK(t.max_error == 0);
      } else {
        CHECK(t.max_error > 0);
        CHECK(t.max_error < 0.1f);
      }
    }
  }
}

TEST_CASE("gguf writer: bad tensors are refused naming the destination", "[gguf]") {
  gguf::LlamaSpec spec;
  spec.dim = 64, spec.hidden_dim = 96, spec.n_layers = 1, spec.n_heads = 4, spec.n_kv_heads = 4;
  spec.head_dim = 16, spec.vocab_size = 10, spec.context_length = 8;
  std::stringstream s;
  const std::vector<gguf::F32Tensor> odd = {
      {"blk.0.ffn_down.weight", {64, 40}, [] { return std::vector<float>(64 * 40); }}};
  CHECK_THROWS_WITH(gguf::write_llama(spec, odd, gguf::OutType::q8_0, s, "o.gguf"),
                    "o.gguf: tensor blk.0.ffn_down.weight: rows of 40 values do not hold whole "
                    "Q8_0 blocks of 32");
  const std::vector<gguf::F32Tensor> nan = {{"blk.0.attn_norm.weight", {64}, [] {
                                               std::vector<float> v(64);
                                               v[3] = std::nanf("");
                                               return v;
                                             }}};
  CHECK_THROWS_WITH(gguf::write_llama(spec, nan, gguf::OutType::f32, s, "o.gguf"),
                    "o.gguf: tensor blk.0.attn_norm.weight holds a non-finite value");
  const std::vector<gguf::F32Tensor> short_tensor = {
      {"blk.0.attn_norm.weight", {64}, [] { return std::vector<float>(63); }}};
  CHECK_THROWS_WITH(gguf::write_llama(spec, short_tensor, gguf::OutType::f32, s, "o.gguf"),
                    "o.gguf: tensor blk.0.attn_norm.weight produced 63 values, its shape holds 64");
  spec.dim = 0;
  CHECK_THROWS_WITH(gguf::write_llama(spec, {}, gguf::OutType::f32, s, "o.gguf"),
                    "o.gguf: embedding_length 0 does not fit GGUF's u32");
}

TEST_CASE("gguf writer: llama-convert --to gguf-* from llama2.c files", "[gguf][convert]") {
  const std::string out = llama::test::temp_path("stories1M.gguf");
  std::ostringstream o, e;
  REQUIRE(llama::convert::run_convert(
              {llama::test::model_path("stories1M.bin"), out, "--to", "gguf-f32", "--tokenizer",
               llama::test::model_path("tok2048.bin")},
              o, e) == 0);
  INFO(o.str() << e.str());
  CHECK(o.str().find("(GGUF F32, vocabulary of ") != std::string::npos);
  const auto f = gguf::File::open(out);
  const auto m = gguf::read_llama(f);
  CHECK(m.output == nullptr);  // stories1M ties its classifier
  const auto theirs = gguf::File::open(llama::test::model_path("gguf/stories1M.f32.gguf"));
  const auto* a = f.find_tensor("blk.3.attn_k.weight");
  const auto* b = theirs.find_tensor("blk.3.attn_k.weight");
  REQUIRE(a->data.size() == b->data.size());
  CHECK(std::memcmp(a->data.data(), b->data.data(), a->data.size()) == 0);
  CHECK(f.find("tokenizer.ggml.tokens")->count == 2048);

  // A version 2 (Q8_0) source is dequantized, then quantized as GGUF Q8_0 blocks.
  const std::string q = llama::test::temp_path("q-gqa.gguf");
  std::ostringstream o2, e2;
  REQUIRE(llama::convert::run_convert(
              {llama::test::model_path("q-gqa.v2.bin"), q, "--to", "gguf-q8_0"}, o2, e2) == 0);
  const auto g = gguf::File::open(q);
  const auto mg = gguf::read_llama(g);
  CHECK(mg.output != nullptr);  // separate classifier
  CHECK(gguf::type_name(mg.layers[2].w2->type) == "Q8_0");
  CHECK(g.find("tokenizer.ggml.tokens") == nullptr);
  CHECK(o2.str().find("max error across all weights") != std::string::npos);

  std::ostringstream o3, e3;
  CHECK(llama::convert::run_convert({"a", "b", "--to", "gguf-q5_k"}, o3, e3) == 2);
  CHECK(e3.str().find("--to: must be v0, v1, v2, gguf-f32") != std::string::npos);
  CHECK(llama::convert::run_convert({"a", "b", "--to", "v1", "-k", "t.bin"}, o3, e3) == 2);
  CHECK(llama::convert::run_convert({llama::test::model_path("stories1M.bin"), out, "--to",
                                     "gguf-q8_0", "-k", "/nonexistent/tok.bin"},
                                    o3, e3) == 1);
}
