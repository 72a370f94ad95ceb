// Seeds of fuzz_tokenizer_pipeline: the components of the real families
// (Llama 2's SentencePiece-style, Llama 3's and GPT-2's byte-level), and the
// pipelines issue 39 found growing or backtracking without bound, each with a
// text (components JSON, a NUL, the text).
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

namespace fs = std::filesystem;

namespace {

void write(const fs::path& dir, const std::string& name, const std::string& components,
           const std::string& text) {
  fs::create_directories(dir);
  std::ofstream out(dir / name, std::ios::binary | std::ios::trunc);
  out << components << '\0' << text;
  if (!out) throw std::runtime_error("cannot write " + (dir / name).string());
}

std::string replace(const std::string& from, const std::string& to) {
  return R"({"type":"Replace","pattern":{"String":")" + from + R"("},"content":")" + to + R"("})";
}

std::string repeated(const std::string& step, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += (i ? "," : "") + step;
  return out;
}

std::string split(const std::string& regex) {
  return R"({"type":"Split","pattern":{"Regex":")" + regex + R"("},"behavior":"Isolated"})";
}

}  // namespace

void tokenizer_pipeline_seeds(const fs::path& dir) {
  const std::string sentencepiece_decoder =
      R"("decoder":{"type":"Sequence","decoders":[)" + replace("▁", " ") +
      R"(,{"type":"ByteFallback"},{"type":"Fuse"},{"type":"Strip","content":" ","start":1,"stop":0}]})";
  write(dir, "llama2",
        R"({"normalizer":{"type":"Sequence","normalizers":[{"type":"Prepend","prepend":"▁"},)" +
            replace(" ", "▁") + "]}," + sentencepiece_decoder + "}",
        "Hello world, caf\xC3\xA9 \xF0\x9F\xA6\x99 <0x41>");
  write(
      dir, "llama3",
      R"({"pre_tokenizer":{"type":"Sequence","pretokenizers":[)" +
          split(
              R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+)") +
          R"(,{"type":"ByteLevel","add_prefix_space":false,"use_regex":false}]},)"
          R"("decoder":{"type":"ByteLevel"},)"
          R"("added_tokens":[{"id":517,"content":"<|eot|>","special":true}]})",
      "I'm here:  1234567 \n\n\tdone<|eot|>\xFF\xC0");
  write(dir, "gpt2",
        R"({"pre_tokenizer":{"type":"ByteLevel","add_prefix_space":true,"use_regex":true},)"
        R"("decoder":{"type":"ByteLevel"}})",
        "it's 42 degrees   outside");
  // Issue 39: 2^48 bytes from one "a" in the normalizer or the decoder.
  write(dir, "normalizer-bomb",
        R"({"normalizer":{"type":"Sequence","normalizers":[)" + repeated(replace("a", "aa"), 48) +
            "]}}",
        "a b a");
  write(dir, "decoder-bomb",
        R"({"decoder":{"type":"Sequence","decoders":[)" + repeated(replace("a", "aa"), 48) + "]}}",
        "aaa");
  const std::string prepend = R"({"type":"Prepend","prepend":")" + std::string(256, 'p') + "\"}";
  write(dir, "prepend-many",
        R"({"normalizer":{"type":"Sequence","normalizers":[)" + repeated(prepend, 20) + "]}}", "a");
  // Issue 39: backtracking at every position, each under PCRE2's match limit.
  write(dir, "split-backtracks", R"({"pre_tokenizer":)" + split(".{0,3000}.{0,3000}[^a]") + "}",
        std::string(7000, 'a'));
  write(dir, "split-rescans", R"({"pre_tokenizer":)" + split("(?=[^x]*+[0-9])") + "}",
        std::string(7000, 'a'));
  write(dir, "split-spaces",
        R"({"pre_tokenizer":)" + split(R"(\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+)") + "}",
        std::string(7000, ' ') + "x");
}
