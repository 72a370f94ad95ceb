// GGUF's llama architecture: llama.cpp's shared files read as the models they
// are, and every inconsistency between metadata, tensors and tokenizer refused
// with one line naming the file and the problem.
#include <catch2/catch.hpp>

#include "gguf_tiny.hpp"
#include "llama/error.hpp"
#include "llama/formats/gguf_llama.hpp"
#include "test_support.hpp"

namespace gguf = llama::gguf;
using llama::test::TinyLlama;

namespace {

gguf::LlamaFile read_tiny(const TinyLlama& spec, std::vector<std::byte>& keep) {
  keep = llama::test::tiny_llama_gguf(spec);
  static std::vector<gguf::File> files;  // the LlamaFile's tensors point into it
  files.push_back(gguf::File::parse(keep, "tiny.gguf", nullptr));
  return gguf::read_llama(files.back());
}

void refused(const TinyLlama& spec, const std::string& why) {
  std::vector<std::byte> bytes;
  try {
    (void)read_tiny(spec, bytes);
    FAIL("accepted; expected " << why);
  } catch (const llama::Error& e) {
    const std::string msg = e.what();
    INFO(msg);
    CHECK(msg.rfind("tiny.gguf: ", 0) == 0);
    CHECK(msg.find('\n') == std::string::npos);
    CHECK(msg.find(why) != std::string::npos);
  }
}

}  // namespace

TEST_CASE("gguf llama: the shared stories1M and rand-k files", "[gguf]") {
  const auto f = gguf::File::open(llama::test::model_path("gguf/stories1M.q4_0.gguf"));
  const gguf::LlamaFile m = gguf::read_llama(f);
  CHECK(m.dim == 128);
  CHECK(m.hidden_dim == 352);
  CHECK(m.n_layers == 5);
  CHECK(m.n_heads == 8);
  CHECK(m.n_kv_heads == 4);
  CHECK(m.head_dim == 16);
  CHECK(m.vocab_size == 2048);
  CHECK(m.context_length == 128);
  CHECK(m.norm_eps == Approx(1e-5));
  CHECK(m.rope_theta == 10000);
  CHECK(m.output != nullptr);  // convert-llama2c writes the classifier
  CHECK(m.layers.size() == 5);
  CHECK(m.layers[4].w2->name == "blk.4.ffn_down.weight");
  CHECK(gguf::type_name(m.layers[0].wq->type) == "Q4_0");

  const auto k = gguf::File::open(llama::test::model_path("gguf/rand-k.q4_k_m.gguf"));
  const gguf::LlamaFile r = gguf::read_llama(k);
  CHECK(r.dim == 256);
  CHECK(r.hidden_dim == 768);
  CHECK(r.n_kv_heads == 2);
  CHECK(r.head_dim == 64);
  CHECK(gguf::type_name(r.layers[1].wv->type) == "Q6_K");
  CHECK(gguf::type_name(r.layers[0].wv->type) == "Q4_K");
}

TEST_CASE("gguf llama: a consistent tiny file, tied and untied, every matrix type", "[gguf]") {
  for (auto type : {gguf::TensorType::F32, gguf::TensorType::F16, gguf::TensorType::BF16,
                    gguf::TensorType::Q8_0, gguf::TensorType::Q4_0}) {
    INFO(gguf::type_name(type));
    TinyLlama spec;
    spec.matrix_type = type;
    spec.tied = type == gguf::TensorType::Q8_0;
    std::vector<std::byte> bytes;
    const auto m = read_tiny(spec, bytes);
    CHECK(m.head_dim == 16);
    CHECK((m.output == nullptr) == spec.tied);
  }
}

TEST_CASE("gguf llama: inconsistent files are refused", "[gguf][robustness]") {
  TinyLlama s;
  s.edit = [](gguf::Writer& w) { w.set_string("general.architecture", "gpt2"); };
  refused(s, "general.architecture is \"gpt2\"; only \"llama\" models are supported");

  for (const char* key :
       {"llama.embedding_length", "llama.block_count", "llama.attention.head_count",
        "llama.feed_forward_length", "llama.context_length",
        "llama.attention.layer_norm_rms_epsilon", "general.architecture"}) {
    TinyLlama d;
    d.drop = {key};
    refused(d, std::string("metadata key \"") + key + "\" is missing");
  }
  TinyLlama t;
  t.tokenizer_tokens = 299;
  refused(t,
          "the tokenizer has 299 tokens (tokenizer.ggml.tokens) but the embedding "
          "token_embd.weight has 300 rows");

  TinyLlama missing;
  missing.drop = {"blk.1.ffn_up.weight"};
  refused(missing, "tensor \"blk.1.ffn_up.weight\" is missing");

  TinyLlama extra;
  extra.edit = [](gguf::Writer& w) {
    w.add_tensor("rope_freqs.weight", {8}, gguf::TensorType::F32,
                 [] { return std::vector<std::byte>(32); });
  };
  refused(extra, "tensor \"rope_freqs.weight\" is not part of a llama model");

  TinyLlama shape;
  shape.edit = [](gguf::Writer& w) { w.set_u32("llama.feed_forward_length", 97); };
  refused(
      shape,
      "tensor \"blk.0.ffn_gate.weight\" has shape [96, 64], expected [97, 64] (hidden 97, dim 64)");

  TinyLlama unsupported;
  unsupported.dim = 256;
  unsupported.heads = 4;
  unsupported.drop = {"blk.0.attn_v.weight"};
  unsupported.edit = [](gguf::Writer& w) {
    w.add_tensor("blk.0.attn_v.weight", {128, 256}, gguf::TensorType::Q8_K,
                 [] { return std::vector<std::byte>(128 * 292); });
  };
  refused(
      unsupported,
      "tensor \"blk.0.attn_v.weight\" has type Q8_K, which is not supported "
      "(supported: F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K)");

  TinyLlama heads;
  heads.edit = [](gguf::Writer& w) { w.set_u32("llama.attention.head_count_kv", 3); };
  refused(heads,
          "llama.attention.head_count 4 is not a multiple of llama.attention.head_count_kv 3");

  TinyLlama layers;
  layers.edit = [](gguf::Writer& w) { w.set_u32("llama.block_count", 100000); };
  refused(layers, "llama.block_count 100000 needs 900002 tensors or more, the file has 21");
  layers.edit = [](gguf::Writer& w) { w.set_u32("llama.block_count", 4000000000u); };
  refused(layers, "metadata key \"llama.block_count\" is 4000000000 (expected 1 .. 2^31)");

  TinyLlama zero;
  zero.edit = [](gguf::Writer& w) { w.set_u32("llama.embedding_length", 0); };
  refused(zero, "metadata key \"llama.embedding_length\" is 0");

  TinyLlama rope;
  rope.edit = [](gguf::Writer& w) { w.set_u32("llama.rope.dimension_count", 8); };
  refused(rope, "partial rotary embeddings are not supported");

  TinyLlama yarn;
  yarn.edit = [](gguf::Writer& w) { w.set_string("llama.rope.scaling.type", "yarn"); };
  refused(yarn, "llama.rope.scaling.type \"yarn\" is not supported");

  TinyLlama moe;
  moe.edit = [](gguf::Writer& w) { w.set_u32("llama.expert_count", 8); };
  refused(moe, "mixture-of-experts models are not supported");

  TinyLlama eps;
  eps.edit = [](gguf::Writer& w) { w.set_string("llama.attention.layer_norm_rms_epsilon", "x"); };
  refused(eps, "is a string, expected a number");

  TinyLlama vocab;
  vocab.edit = [](gguf::Writer& w) { w.set_u32("llama.vocab_size", 301); };
  refused(vocab, "llama.vocab_size 301 disagrees with the embedding");

  // general.alignment 1 packs tensors wherever the header ends: f32 tensors
  // off a 4-byte boundary are refused, aligned ones accepted.
  int misaligned = 0;
  for (int n = 0; n < 4; ++n) {
    TinyLlama packed;
    packed.alignment = 1;
    packed.edit = [n](gguf::Writer& w) { w.set_string("general.name", std::string(n, 'x')); };
    std::vector<std::byte> bytes;
    try {
      (void)read_tiny(packed, bytes);
      CHECK(gguf::File::parse(bytes, "t", nullptr).data_offset() % 4 == 0);
    } catch (const llama::Error& e) {
      CHECK(std::string(e.what()).find("not a multiple of 4 (general.alignment 1)") !=
            std::string::npos);
      ++misaligned;
    }
  }
  CHECK(misaligned == 3);

  TinyLlama norm;
  norm.drop = {"blk.0.ffn_norm.weight"};
  norm.edit = [](gguf::Writer& w) {
    w.add_tensor("blk.0.ffn_norm.weight", {64}, gguf::TensorType::F16,
                 [] { return std::vector<std::byte>(128); });
  };
  refused(norm, "tensor \"blk.0.ffn_norm.weight\" has type F16; norms must be F32");
}
