// open_tokenizer: picks the tokenizer implementation from what a path holds.
#include <filesystem>
#include <fstream>

#include "llama/error.hpp"
#include "llama/tokenizers/hf_tokenizer.hpp"
#include "llama/tokenizers/llama2c_tokenizer.hpp"
#include "llama/tokenizers/tokenizer.hpp"

namespace llama {
namespace {

namespace fs = std::filesystem;

// tokenizer.json is JSON text: an object. tokenizer.bin starts with an int32
// max_token_length, whose first byte is never '{' with leading whitespace... a
// value of 123 ('{') is possible in principle, so look past whitespace for '{'
// followed by whitespace or '"' as JSON has it.
bool looks_like_json(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char head[64] = {};
  in.read(head, sizeof head);
  const auto n = static_cast<size_t>(in.gcount());
  size_t i = 0;
  while (i < n && (head[i] == ' ' || head[i] == '\n' || head[i] == '\r' || head[i] == '\t')) ++i;
  if (i >= n || head[i] != '{') return false;
  ++i;
  while (i < n && (head[i] == ' ' || head[i] == '\n' || head[i] == '\r' || head[i] == '\t')) ++i;
  return i < n && (head[i] == '"' || head[i] == '}');
}

std::unique_ptr<Tokenizer> open_json(const fs::path& json, const TokenizerOpenOptions& options) {
  std::error_code ec;
  const fs::path config = json.parent_path() / "tokenizer_config.json";
  auto tok =
      load_hf_tokenizer(json.string(), fs::is_regular_file(config, ec) ? config.string() : "");
  if (options.vocab_size > 0 && tok->vocab_size() > options.vocab_size) {
    throw Error(json.string() + ": has " + std::to_string(tok->vocab_size()) +
                " entries, more than the model's vocabulary of " +
                std::to_string(options.vocab_size));
  }
  return tok;
}

}  // namespace

std::unique_ptr<Tokenizer> open_tokenizer(const std::string& path,
                                          const TokenizerOpenOptions& options) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    const fs::path json = fs::path(path) / "tokenizer.json";
    if (!fs::is_regular_file(json, ec)) throw Error(path + ": a directory without tokenizer.json");
    return open_json(json, options);
  }
  if (fs::is_regular_file(path, ec) && looks_like_json(path)) return open_json(path, options);
  return std::make_unique<Llama2cTokenizer>(path, options.vocab_size);
}

}  // namespace llama
