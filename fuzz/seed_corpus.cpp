// llama-fuzz-seeds OUTDIR: writes the seed corpus of every fuzz target into
// OUTDIR/<target>/, generated here (tiny checkpoints in versions 0, 1 and 2, a
// byte-level tokenizer, texts, argument lists, GGUF files), never copied from the shared models.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "gguf_tiny.hpp"
#include "llama/formats/gguf_writer.hpp"
#include "llama/formats/llama2c_checkpoint.hpp"
#include "llama/formats/llama2c_writer.hpp"
#include "llama/formats/safetensors_writer.hpp"

namespace fs = std::filesystem;

// fuzz/seeds_chat_template.cpp
void chat_template_seeds(const fs::path& dir);
// fuzz/seeds_tokenizer_pipeline.cpp
void tokenizer_pipeline_seeds(const fs::path& dir);

namespace {

using Bytes = std::vector<uint8_t>;

template <typename T>
void append(Bytes& out, const T& v) {
  const size_t at = out.size();
  out.resize(at + sizeof(T));
  std::memcpy(out.data() + at, &v, sizeof(T));
}

void write(const fs::path& dir, const std::string& name, const Bytes& bytes) {
  fs::create_directories(dir);
  std::ofstream out(dir / name, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + (dir / name).string());
}

// A consistent legacy checkpoint: header, then every tensor and both rope tables.
Bytes checkpoint(const std::vector<int32_t>& h) {
  const int64_t dim = h[0], hidden = h[1], layers = h[2], heads = h[3], kv_heads = h[4];
  const int64_t vocab = std::abs(h[5]), seq = h[6];
  const int64_t hs = dim / heads, kv = kv_heads * hs;
  int64_t floats = vocab * dim +
                   layers * (2 * dim + 2 * dim * dim + 2 * kv * dim + 3 * dim * hidden) + dim +
                   seq * hs;
  if (h[5] < 0) floats += vocab * dim;
  Bytes out;
  for (int32_t v : h) append(out, v);
  for (int64_t i = 0; i < floats; ++i) {
    append(out, static_cast<float>(std::sin(0.37 * static_cast<double>(i)) * 0.1));
  }
  return out;
}

// The same model in llama2.c's version 1 (f32) or 2 (Q8_0) layout, through the project's writer.
Bytes rewritten(const Bytes& v0, llama::CheckpointFormat format) {
  const auto view = std::span(reinterpret_cast<const std::byte*>(v0.data()), v0.size());
  const llama::Checkpoint ck = llama::Checkpoint::parse(view, "seed", nullptr);
  std::ostringstream out;
  llama::WriteOptions options;
  options.format = format;
  llama::write_checkpoint(ck, options, out, "seed");
  const std::string s = out.str();
  return Bytes(s.begin(), s.end());
}

void checkpoint_seeds(const fs::path& dir) {
  write(dir, "shared-classifier", checkpoint({8, 12, 2, 2, 2, 10, 4}));
  write(dir, "separate-classifier-gqa", checkpoint({8, 12, 2, 2, 1, -10, 4}));
  for (const auto& [name, format] : {std::pair{"v1", llama::CheckpointFormat::v1},
                                     std::pair{"v2-q8", llama::CheckpointFormat::v2}}) {
    write(dir, std::string(name) + "-shared-classifier",
          rewritten(checkpoint({8, 12, 2, 2, 2, 10, 4}), format));
    write(dir, std::string(name) + "-separate-classifier-gqa",
          rewritten(checkpoint({8, 12, 2, 2, 1, -10, 4}), format));
  }
  write(dir, "one-layer", checkpoint({4, 4, 1, 1, 1, 3, 2}));
  Bytes cut = checkpoint({8, 12, 2, 2, 1, 10, 4});
  cut.resize(cut.size() / 2);
  write(dir, "truncated", cut);
  Bytes magic;
  for (int32_t v : {0x616b3432, 2, 8, 12, 2, 2, 1}) append(magic, v);
  write(dir, "ak42-magic", magic);
  Bytes header = checkpoint({8, 12, 2, 2, 2, 10, 4});
  header.resize(28);
  write(dir, "header-only", header);
}

// A tokenizer.bin: <unk>, <s>, </s>, the 256 byte tokens, then a few merges.
Bytes tokenizer_file(int32_t extra) {
  std::vector<std::pair<float, std::string>> entries = {
      {0, "<unk>"}, {0, "\n<s>\n"}, {0, "\n</s>\n"}};
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    entries.emplace_back(0.0f, name);
  }
  const char* merges[] = {
      " ",  "a", "b", "h", "e", "l", "o", " h", "he", "ll", "llo", " hello", "\xE2\x96\x81",
      "ab", " a"};
  float score = -1;
  for (int32_t i = 0; i < extra && i < static_cast<int32_t>(std::size(merges)); ++i) {
    entries.emplace_back(score, merges[i]);
    score -= 0.5f;
  }
  Bytes out;
  append(out, static_cast<uint16_t>(entries.size()));  // the target's vocab_size prefix
  append(out, int32_t{8});                             // max_token_length
  for (const auto& [s, text] : entries) {
    append(out, s);
    append(out, static_cast<int32_t>(text.size()));
    out.insert(out.end(), text.begin(), text.end());
  }
  return out;
}

void tokenizer_seeds(const fs::path& dir) {
  write(dir, "bytes-only", tokenizer_file(0));
  write(dir, "with-merges", tokenizer_file(15));
  Bytes small = tokenizer_file(15);
  small[0] = 5;  // ask for fewer entries than the file has
  small[1] = 0;
  write(dir, "prefix-of-vocab", small);
}

// A GGUF through the project's writer: `llama` metadata with a small
// vocabulary, a tensor of each type the reader computes with, and a custom
// alignment when asked.
Bytes gguf_file(uint32_t alignment, int layers) {
  namespace gguf = llama::gguf;
  gguf::Writer w;
  w.set_string("general.architecture", "llama");
  w.set_u32("llama.embedding_length", 32);
  w.set_u32("llama.block_count", static_cast<uint32_t>(layers));
  w.set_f32("llama.attention.layer_norm_rms_epsilon", 1e-5f);
  w.set_string("tokenizer.ggml.model", "llama");
  w.set_strings("tokenizer.ggml.tokens", {"<unk>", "<s>", "</s>",
                                          "\xe2\x96\x81"
                                          "a",
                                          "b"});
  w.set_f32s("tokenizer.ggml.scores", {0, 0, 0, -1, -2});
  w.set_i32s("tokenizer.ggml.token_type", {2, 3, 3, 1, 1});
  w.set_bool("tokenizer.ggml.add_bos_token", true);
  auto fill = [](int64_t n) {
    return [n] {
      std::vector<std::byte> b(static_cast<size_t>(n));
      for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<std::byte>((i * 37 + 11) & 0x3f);
      return b;
    };
  };
  const std::pair<const char*, gguf::TensorType> types[] = {
      {"f32", gguf::TensorType::F32},   {"f16", gguf::TensorType::F16},
      {"bf16", gguf::TensorType::BF16}, {"q8_0", gguf::TensorType::Q8_0},
      {"q4_0", gguf::TensorType::Q4_0}, {"q4_k", gguf::TensorType::Q4_K},
      {"q6_k", gguf::TensorType::Q6_K}, {"q4_1", gguf::TensorType::Q4_1},
      {"q5_0", gguf::TensorType::Q5_0}, {"q5_1", gguf::TensorType::Q5_1},
      {"q5_k", gguf::TensorType::Q5_K}, {"q3_k", gguf::TensorType::Q3_K},
      {"q2_k", gguf::TensorType::Q2_K}};
  for (int l = 0; l < layers; ++l) {
    for (const auto& [name, type] : types) {
      const std::vector<int64_t> shape = {2, 256};
      const std::string full = "blk." + std::to_string(l) + "." + name + ".weight";
      w.add_tensor(full, shape, type, fill(gguf::Writer::tensor_bytes(full, shape, type)));
    }
  }
  std::ostringstream out;
  w.write(out, "seed", alignment);
  const std::string str = out.str();
  return Bytes(str.begin(), str.end());
}

void gguf_seeds(const fs::path& dir) {
  write(dir, "llama-tensors", gguf_file(32, 1));
  write(dir, "aligned-64-two-layers", gguf_file(64, 2));
  Bytes cut = gguf_file(32, 1);
  cut.resize(cut.size() / 3);
  write(dir, "truncated", cut);
  // Whole llama models (tests/gguf_tiny.cpp), small enough for the fuzzer's max_len.
  llama::test::TinyLlama tiny;
  tiny.dim = 32, tiny.hidden = 32, tiny.layers = 1, tiny.heads = 2, tiny.kv_heads = 1;
  tiny.vocab = 260, tiny.context = 8, tiny.tied = true;
  const auto to_bytes = [](const std::vector<std::byte>& b) {
    Bytes out(b.size());
    std::memcpy(out.data(), b.data(), b.size());
    return out;
  };
  write(dir, "tiny-llama-f32-tied", to_bytes(llama::test::tiny_llama_gguf(tiny)));
  tiny.matrix_type = llama::gguf::TensorType::Q8_0;
  write(dir, "tiny-llama-q8_0-tied", to_bytes(llama::test::tiny_llama_gguf(tiny)));
  // Super-blocks of 256 need rows of 256: these two are 140 and 184 KB.
  tiny.dim = 256, tiny.hidden = 256, tiny.heads = 4;
  tiny.matrix_type = llama::gguf::TensorType::Q2_K;
  write(dir, "tiny-llama-q2_k-tied", to_bytes(llama::test::tiny_llama_gguf(tiny)));
  tiny.matrix_type = llama::gguf::TensorType::Q3_K;
  write(dir, "tiny-llama-q3_k-tied", to_bytes(llama::test::tiny_llama_gguf(tiny)));
}

Bytes text(const std::string& s) { return Bytes(s.begin(), s.end()); }

void bpe_seeds(const fs::path& dir) {
  write(dir, "empty", {});
  write(dir, "story", text("Once upon a time, there was a little girl named Lily."));
  write(dir, "unicode", text("caf\xC3\xA9 \xE6\x97\xA5\xE6\x9C\xAC \xF0\x9F\xA6\x99 na\xC3\xAFve"));
  write(dir, "invalid-utf8", text("\x80\xBF\xC3\x28\xF0\x9F\x98\xFF\xFE"));
  static constexpr char kControls[] = "tab\there\nnul\0x";
  write(dir, "controls", text(std::string(kControls, sizeof kControls - 1)));
  write(dir, "byte-token-name", text("<0x41> <s> </s>"));
}

// Small tokenizer.json documents of both families (a NUL then tokenizer_config.json).
void tokenizer_json_seeds(const fs::path& dir) {
  const std::string byte_level =
      R"({"model":{"type":"BPE","vocab":{"a":0,"b":1,"c":2,"ab":3,"abc":4,"Ġ":5,"Ġa":6},)"
      R"("merges":["a b","ab c",["Ġ","a"]],"ignore_merges":true},)"
      R"("added_tokens":[{"id":7,"content":"<|end|>","special":true}],)"
      R"("pre_tokenizer":{"type":"Sequence","pretokenizers":[{"type":"Split","pattern":)"
      R"({"Regex":"(?i:'s)|\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"},)"
      R"("behavior":"Isolated","invert":false},{"type":"ByteLevel","add_prefix_space":false,)"
      R"("use_regex":false}]},"post_processor":{"type":"ByteLevel"},"decoder":{"type":"ByteLevel"}})";
  write(dir, "byte-level", text(byte_level));
  const std::string sentencepiece =
      R"({"model":{"type":"BPE","unk_token":"<unk>","fuse_unk":true,"byte_fallback":true,)"
      R"("vocab":{"<unk>":0,"<s>":1,"</s>":2,"<0x41>":3,"<0xF0>":4,"▁":5,"h":6,"i":7,"hi":8,)"
      R"("▁hi":9},"merges":["h i","▁ hi"]},)"
      R"("added_tokens":[{"id":1,"content":"<s>","special":true},{"id":2,"content":"</s>","special":true}],)"
      R"("normalizer":{"type":"Sequence","normalizers":[{"type":"Prepend","prepend":"▁"},)"
      R"({"type":"Replace","pattern":{"String":" "},"content":"▁"}]},)"
      R"("post_processor":{"type":"TemplateProcessing","single":[{"SpecialToken":{"id":"<s>"}},)"
      R"({"Sequence":{"id":"A"}}],"special_tokens":{"<s>":{"id":"<s>","ids":[1]}}},)"
      R"("decoder":{"type":"Sequence","decoders":[{"type":"Replace","pattern":{"String":"▁"},)"
      R"("content":" "},{"type":"ByteFallback"},{"type":"Fuse"},{"type":"Strip","content":" ",)"
      R"("start":1,"stop":0}]}})";
  write(dir, "sentencepiece", text(sentencepiece));
  Bytes with_config = text(sentencepiece);
  with_config.push_back(0);
  const Bytes config = text(
      R"({"add_bos_token":true,"add_eos_token":true,"bos_token":"<s>","eos_token":{"content":"</s>"}})");
  with_config.insert(with_config.end(), config.begin(), config.end());
  write(dir, "sentencepiece-config", with_config);
}

Bytes args(const std::vector<std::string>& a) {
  Bytes out;
  for (size_t i = 0; i < a.size(); ++i) {
    if (i > 0) out.push_back(0);
    out.insert(out.end(), a[i].begin(), a[i].end());
  }
  return out;
}

void cli_seeds(const fs::path& dir) {
  // Arguments as run_cli receives them: without the program name.
  write(dir, "generate",
        args({"-c", "m.bin", "-k", "t.bin", "-p", "Once upon", "-t", "0.8", "--top-p", "0.9", "-s",
              "64", "-r", "42"}));
  write(dir, "json",
        args({"--checkpoint=m.bin", "--format", "json", "-b", "reference", "-j", "2"}));
  write(dir, "actions", args({"-c", "m.bin", "--tokenize", "--verify-checkpoint", "--explain"}));
  write(dir, "help", args({"--help"}));
  write(dir, "version", args({"--version", "--list-backends"}));
  write(dir, "bad-values",
        args({"-c", "m.bin", "-t", "nan", "--top-p=-0.1", "-s", "-5", "-r", "-3", "-j", "0",
              "--format", "xml"}));
  write(dir, "huge-numbers",
        args({"-c", "m.bin", "-s", "99999999999999999999", "-r", "18446744073709551616", "-t",
              "1e309"}));
}

// Safetensors files through the project's writer: every supported dtype,
// metadata, an empty and a zero-size tensor, and a few hand-made headers.
void safetensors_seeds(const fs::path& dir) {
  using llama::SafetensorsDtype;
  const std::vector<float> f32 = {1.0f, -2.0f, 0.5f, 3.0f, 0.25f, -1.5f};
  const std::vector<uint16_t> half = {0x3f80, 0xc000, 0x3c00, 0xbc00};
  const auto f32_bytes = std::as_bytes(std::span(f32));
  const auto half_bytes = std::as_bytes(std::span(half));
  const std::vector<llama::SafetensorsOutput> tensors = {
      {"model.embed_tokens.weight", SafetensorsDtype::F32, {3, 2}, f32_bytes},
      {"model.norm.weight", SafetensorsDtype::BF16, {2}, half_bytes.subspan(0, 4)},
      {"lm_head.weight", SafetensorsDtype::F16, {1, 2}, half_bytes.subspan(4, 4)},
      {"empty", SafetensorsDtype::I8, {0}, {}}};
  for (const auto& [name, metadata] :
       {std::pair{"tensors", std::vector<std::pair<std::string, std::string>>{}},
        std::pair{"tensors-metadata",
                  std::vector<std::pair<std::string, std::string>>{{"format", "pt"}}}}) {
    std::ostringstream out;
    llama::write_safetensors(out, tensors, metadata, "seed");
    write(dir, name, text(out.str()));
  }
  std::ostringstream none;
  llama::write_safetensors(none, {}, {}, "seed");
  write(dir, "no-tensors", text(none.str()));
  const auto raw = [&](const std::string& name, const std::string& header, size_t data) {
    Bytes b;
    append(b, static_cast<uint64_t>(header.size()));
    b.insert(b.end(), header.begin(), header.end());
    b.resize(b.size() + data);
    write(dir, name, b);
  };
  raw("overlap",
      R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
      8);
  raw("rank-3",
      R"({"__metadata__":{"k":"v"},"a":{"dtype":"F64","shape":[1,1,1],"data_offsets":[0,8]}})", 8);
}

void hf_config_seeds(const fs::path& dir) {
  // The shape of fuzz_hf_config's fixed tensors, and the issue 39 examples: the layer
  // counts that were allocated for before the tensors refused them.
  for (const char* layers : {"1", "100000000", "2147483647"}) {
    write(dir, std::string("llama-layers-") + layers,
          text(std::string(R"({"architectures": ["LlamaForCausalLM"], "model_type": "llama",
    "hidden_size": 8, "intermediate_size": 12, "num_hidden_layers": )") +
               layers + R"(, "num_attention_heads": 2,
    "num_key_value_heads": 1, "vocab_size": 10, "max_position_embeddings": 16,
    "rms_norm_eps": 1e-05, "rope_theta": 10000.0, "rope_scaling": null,
    "tie_word_embeddings": false, "bos_token_id": 1, "eos_token_id": 2, "hidden_act": "silu",
    "attention_bias": false, "mlp_bias": false, "torch_dtype": "float32"})"));
  }
  write(dir, "llama3", text(R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 96,
    "intermediate_size": 256, "num_hidden_layers": 2, "num_attention_heads": 4,
    "num_key_value_heads": 1, "head_dim": 32, "vocab_size": 300, "rope_theta": 500000.0,
    "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
    "high_freq_factor": 4.0, "original_max_position_embeddings": 64},
    "tie_word_embeddings": true, "bos_token_id": 256, "eos_token_id": [257, 259]})"));
  write(dir, "mistral", text(R"({"architectures": ["MistralForCausalLM"], "model_type": "mistral",
    "hidden_size": 64, "intermediate_size": 192, "num_hidden_layers": 2, "num_attention_heads": 4,
    "num_key_value_heads": 2, "vocab_size": 320, "sliding_window": null,
    "rope_scaling": {"type": "linear", "factor": 2.0}})"));
  write(dir, "generation",
        text(R"({"bos_token_id": 1, "eos_token_id": [1, 2], "do_sample": true})"));
}

// llama-server request bodies: each route's fields, valid and not.
void server_request_seeds(const fs::path& dir) {
  write(dir, "completion",
        text(R"({"model": "m", "prompt": "Once upon", "max_tokens": 16, "temperature": 0.7,
                 "top_p": 0.9, "seed": 42, "stop": ["\n", "The end"], "stream": true,
                 "stream_options": {"include_usage": true}, "n": 1, "ignore_eos": false})"));
  write(dir, "token-prompt", text(R"({"prompt": [[1, 403, 2047]], "logprobs": 3, "echo": false})"));
  write(dir, "chat", text(R"({"messages": [{"role": "system", "content": "Be brief."},
                              {"role": "user", "content": [{"type": "text", "text": "Hi"}]}],
                 "max_completion_tokens": 8, "logprobs": true, "top_logprobs": 2})"));
  write(
      dir, "refused",
      text(R"({"prompt": "x", "tools": [], "n": 2, "frequency_penalty": 1, "max_tokens": 1e99})"));
  write(dir, "tokenize", text(R"({"content": "hello", "add_special": true, "with_pieces": true})"));
  write(dir, "detokenize", text(R"({"tokens": [1, 2, 3]})"));
}

// The first byte of each seed chooses the read size (fuzz_load_stream.cpp).
void load_stream_seeds(const fs::path& dir) {
  write(dir, "completions",
        text("\x05"
             "data: {\"choices\":[{\"text\":\"Once\",\"index\":0}]}\n\n"
             ": keep-alive\r\n\r\n"
             "data: {\"choices\":[],\"usage\":{\"completion_tokens\":2}}\r\n\r\n"
             "data: [DONE]\n\n"));
  write(dir, "chat",
        text("\x02"
             "event: x\ndata: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}\r\r"
             "data: {\"error\":{\"message\":\"the server is busy\",\"type\":\"x\"}}\n\n"));
  write(dir, "multi-line",
        text("\x01"
             "data: {\"a\":\ndata: 1}\n\ndata:[DONE]\n\n"));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: llama-fuzz-seeds OUTDIR\n");
    return 2;
  }
  try {
    const fs::path out = argv[1];
    checkpoint_seeds(out / "checkpoint");
    tokenizer_seeds(out / "tokenizer_file");
    bpe_seeds(out / "bpe_encode");
    bpe_seeds(out / "hf_encode");
    tokenizer_json_seeds(out / "tokenizer_json");
    tokenizer_pipeline_seeds(out / "tokenizer_pipeline");
    cli_seeds(out / "cli_args");
    chat_template_seeds(out / "chat_template");
    gguf_seeds(out / "gguf");
    safetensors_seeds(out / "safetensors");
    hf_config_seeds(out / "hf_config");
    server_request_seeds(out / "server_request");
    load_stream_seeds(out / "load_stream");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "llama-fuzz-seeds: %s\n", e.what());
    return 1;
  }
  return 0;
}
