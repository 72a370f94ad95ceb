// The tokenizer a GGUF file carries: llama.cpp's stories1M files encode as
// tok2048's tokenizer.json does (Hugging Face's conversion of the same
// vocabulary) on the reference texts and the held-out stories; a `gpt2`
// vocabulary built from Llama 3's tokenizer.json encodes as Hugging Face's
// tokenizers did; malformed tokenizer metadata is refused naming the key.
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

#include "gguf_tiny.hpp"
#include "llama/error.hpp"
#include "llama/formats/gguf_file.hpp"
#include "llama/formats/gguf_tokenizer.hpp"
#include "llama/formats/gguf_writer.hpp"
#include "test_support.hpp"

namespace gguf = llama::gguf;

namespace {

std::vector<std::string> story_lines(size_t n) {
  std::ifstream in(llama::test::model_path("stories1M-val.txt"));
  REQUIRE(in);
  std::vector<std::string> out;
  std::string line;
  while (out.size() < n && std::getline(in, line)) {
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

std::vector<std::byte> to_bytes(const std::string& s) {
  std::vector<std::byte> b(s.size());
  std::memcpy(b.data(), s.data(), s.size());
  return b;
}

}  // namespace

TEST_CASE("gguf tokenizer: llama.cpp's stories1M vocabulary encodes as tok2048's tokenizer.json",
          "[gguf][tokenizer]") {
  const auto hf = llama::open_tokenizer(llama::test::model_path("hf/stories1M"));
  std::vector<std::string> texts = story_lines(300);
  for (const auto& c : llama::test::load_json(llama::test::reference_path("hf-tokenizer.json"))) {
    if (c["tokenizer"] == "llama2-tokenizer") texts.push_back(c["text"]);
  }
  for (const char* file :
       {"gguf/stories1M.f32.gguf", "gguf/stories1M.q4_0.gguf", "gguf/rand-k.q6_k.gguf"}) {
    INFO(file);
    const auto f = gguf::File::open(llama::test::model_path(file));
    const auto tok = gguf::open_tokenizer(f, 2048);
    CHECK(tok->vocab_size() == 2048);
    CHECK(tok->special().bos == 1);
    CHECK(tok->special().eos == std::vector<int32_t>{2});
    for (const std::string& t : texts) {
      INFO(t);
      const auto ids = tok->encode(t);
      REQUIRE(ids == hf->encode(t));
      CHECK(tok->decode(ids, true) == hf->decode(ids, true));
    }
  }
  // The prompt of gguf-parity.json.
  const auto f = gguf::File::open(llama::test::model_path("gguf/stories1M.f32.gguf"));
  CHECK(gguf::open_tokenizer(f, 2048)->encode("Once upon a time") ==
        std::vector<int32_t>{1, 413, 437, 261, 386});
}

TEST_CASE("gguf tokenizer: a gpt2 vocabulary with the llama-bpe pre-tokenizer is Llama 3's",
          "[gguf][tokenizer]") {
  const auto j =
      llama::test::load_json(llama::test::model_path("hf/llama3-tokenizer/tokenizer.json"));
  std::vector<std::string> tokens(128256);
  std::vector<int32_t> types(128256, 1);
  for (const auto& [piece, id] : j["model"]["vocab"].items()) tokens[id.get<size_t>()] = piece;
  for (const auto& a : j["added_tokens"]) {
    tokens[a["id"].get<size_t>()] = a["content"];
    types[a["id"].get<size_t>()] = a["special"].get<bool>() ? 3 : 4;
  }
  std::vector<std::string> merges;
  for (const auto& m : j["model"]["merges"]) merges.push_back(m);
  gguf::Writer w;
  w.set_string("general.architecture", "llama");
  w.set_string("tokenizer.ggml.model", "gpt2");
  w.set_string("tokenizer.ggml.pre", "llama-bpe");
  w.set_strings("tokenizer.ggml.tokens", tokens);
  w.set_i32s("tokenizer.ggml.token_type", types);
  w.set_strings("tokenizer.ggml.merges", merges);
  w.set_u32("tokenizer.ggml.bos_token_id", 128000);
  w.set_u32("tokenizer.ggml.eos_token_id", 128009);
  std::ostringstream s;
  w.write(s, "llama3.gguf");
  const auto bytes = to_bytes(s.str());
  const auto f = gguf::File::parse(bytes, "llama3.gguf", nullptr);
  const auto tok = gguf::open_tokenizer(f, 128256);
  size_t n = 0;
  for (const auto& c : llama::test::load_json(llama::test::reference_path("hf-tokenizer.json"))) {
    if (c["tokenizer"] != "llama3-tokenizer") continue;
    const std::string text = c["text"];
    INFO(text);
    llama::EncodeOptions o;
    o.add_special = false;
    CHECK(tok->encode(text, o) == c["ids_no_special"].get<std::vector<int32_t>>());
    CHECK(tok->decode(c["ids_no_special"].get<std::vector<int32_t>>(), false) ==
          c["decoded"].get<std::string>());
    ++n;
  }
  CHECK(n >= 10);
  CHECK(tok->encode("Hi").front() == 128000);  // llama.cpp adds BOS for llama-bpe
}

TEST_CASE("gguf tokenizer: malformed tokenizer metadata is refused",
          "[gguf][tokenizer][robustness]") {
  auto refused = [](std::function<void(gguf::Writer&)> edit, const std::string& why) {
    llama::test::TinyLlama spec;
    spec.edit = std::move(edit);
    const auto bytes = llama::test::tiny_llama_gguf(spec);
    const auto f = gguf::File::parse(bytes, "tiny.gguf", nullptr);
    try {
      (void)gguf::open_tokenizer(f, spec.vocab);
      FAIL("accepted; expected " << why);
    } catch (const llama::Error& e) {
      INFO(e.what());
      CHECK(std::string(e.what()).rfind("tiny.gguf: ", 0) == 0);
      CHECK(std::string(e.what()).find(why) != std::string::npos);
    }
  };
  refused([](gguf::Writer& w) { w.set_string("tokenizer.ggml.model", "bert"); },
          "tokenizer.ggml.model \"bert\" is not supported (llama and gpt2 are)");
  refused(
      [](gguf::Writer& w) {
        w.set_f32s("tokenizer.ggml.scores", {1, 2});
      },
      "\"tokenizer.ggml.scores\" is not 300 floats");
  refused([](gguf::Writer& w) { w.set_i32s("tokenizer.ggml.token_type", {1}); },
          "\"tokenizer.ggml.token_type\" is not 300 integers");
  refused([](gguf::Writer& w) { w.set_string("tokenizer.ggml.tokens", "x"); },
          "\"tokenizer.ggml.tokens\" is not an array of strings");
  refused(
      [](gguf::Writer& w) {
        w.set_string("tokenizer.ggml.model", "gpt2");
        w.set_string("tokenizer.ggml.pre", "qwen2");
      },
      "tokenizer.ggml.pre \"qwen2\" is not supported");
  refused(
      [](gguf::Writer& w) {
        w.set_string("tokenizer.ggml.model", "gpt2");
        w.set_strings("tokenizer.ggml.merges", {"<s> nope"});
      },
      "tokenizer.ggml.merges[0] \"<s> nope\" is not two tokens of the vocabulary");
}
