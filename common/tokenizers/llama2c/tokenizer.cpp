// Tokenizer: tokenizer.bin reading with bounds checks, and run.c's encode/decode.
#include "llama/tokenizers/llama2c_tokenizer.hpp"

#include <cctype>
#include <cstring>
#include <limits>

#include "llama/error.hpp"
#include "llama/mapped_file.hpp"

namespace llama {
namespace {

// Largest token string we accept; Llama 2's longest is 48 bytes.
constexpr int32_t kMaxPieceBytes = 1 << 16;

class ByteReader {
 public:
  ByteReader(std::span<const std::byte> bytes, const std::string& source)
      : bytes_(bytes), source_(source) {}
  template <typename T>
  T read(const std::string& what) {
    T v;
    need(sizeof(T), what);
    std::memcpy(&v, bytes_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  std::string read_string(size_t n, const std::string& what) {
    need(n, what);
    std::string s(reinterpret_cast<const char*>(bytes_.data() + pos_), n);
    pos_ += n;
    return s;
  }
  size_t pos() const { return pos_; }

 private:
  void need(size_t n, const std::string& what) {
    if (bytes_.size() - pos_ < n) {
      throw Error(source_ + ": truncated at byte " + std::to_string(pos_) + " reading " + what);
    }
  }
  std::span<const std::byte> bytes_;
  const std::string& source_;
  size_t pos_ = 0;
};

}  // namespace

Tokenizer::Tokenizer(const std::string& path, int64_t vocab_size) {
  MappedFile file(path);
  *this = parse(file.bytes(), path, vocab_size);
}

Tokenizer Tokenizer::parse(std::span<const std::byte> bytes, const std::string& source,
                           int64_t vocab_size) {
  if (vocab_size <= 0 || vocab_size > std::numeric_limits<int32_t>::max()) {
    throw Error(source + ": vocab_size " + std::to_string(vocab_size) + " out of range");
  }
  Tokenizer t;
  t.source_ = source;
  ByteReader in(bytes, source);
  t.max_token_length_ = in.read<int32_t>("max_token_length");
  if (t.max_token_length_ <= 0 || t.max_token_length_ > kMaxPieceBytes) {
    throw Error(source + ": max_token_length (int32 at offset 0) is " +
                std::to_string(t.max_token_length_) + ", out of range [1, " +
                std::to_string(kMaxPieceBytes) + "]");
  }
  // Each entry takes at least 8 bytes: refuse an impossible count before reserving.
  if (static_cast<uint64_t>(vocab_size) > bytes.size() / 8) {
    throw Error(source + ": has fewer than the model's " + std::to_string(vocab_size) +
                " entries (" + std::to_string(bytes.size()) + " bytes)");
  }
  t.vocab_.reserve(static_cast<size_t>(vocab_size));
  t.scores_.reserve(static_cast<size_t>(vocab_size));
  for (int64_t i = 0; i < vocab_size; ++i) {
    const std::string entry = "entry " + std::to_string(i);
    const size_t entry_offset = in.pos();
    const float score = in.read<float>(entry + " score");
    const int32_t len = in.read<int32_t>(entry + " length");
    if (len < 0 || len > t.max_token_length_) {
      throw Error(source + ": " + entry + " (at byte " + std::to_string(entry_offset) +
                  ") has length " + std::to_string(len) + ", outside [0, max_token_length " +
                  std::to_string(t.max_token_length_) + "]");
    }
    t.scores_.push_back(score);
    t.vocab_.push_back(in.read_string(static_cast<size_t>(len), entry + " text"));
  }
  t.build_index();
  return t;
}

void Tokenizer::build_index() {
  // run.c looks strings up with bsearch over a sorted copy; with duplicate
  // strings the first id wins here, and the Llama 2 vocabulary has none.
  index_.clear();
  for (size_t i = 0; i < vocab_.size(); ++i) {
    index_.emplace(std::string_view(vocab_[i]), static_cast<int32_t>(i));
  }
}

Tokenizer::Tokenizer(const Tokenizer& other)
    : vocab_(other.vocab_),
      scores_(other.scores_),
      max_token_length_(other.max_token_length_),
      source_(other.source_) {
  build_index();
}

Tokenizer& Tokenizer::operator=(const Tokenizer& other) {
  if (this != &other) *this = Tokenizer(other);
  return *this;
}

const std::string& Tokenizer::piece(int32_t token) const {
  if (token < 0 || token >= vocab_size()) {
    throw Error("token id " + std::to_string(token) + " outside the vocabulary of " +
                std::to_string(vocab_size()));
  }
  return vocab_[static_cast<size_t>(token)];
}

int32_t Tokenizer::lookup(std::string_view s) const {
  const auto it = index_.find(s);
  return it == index_.end() ? -1 : it->second;
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool bos, bool eos) const {
  // BOS and EOS take part in the merge search, which indexes the vocabulary with them.
  auto require_special = [&](bool wanted, int32_t id, const char* name) {
    if (wanted && id >= vocab_size()) {
      throw Error(source_ + ": cannot encode with " + name + " (id " + std::to_string(id) +
                  "): the vocabulary has " + std::to_string(vocab_size()) + " entries");
    }
  };
  require_special(bos, kBosToken, "BOS");
  require_special(eos, kEosToken, "EOS");
  std::vector<int32_t> tokens;
  tokens.reserve(text.size() + 3);
  if (bos) tokens.push_back(kBosToken);

  auto push_bytes = [&](std::string_view bytes, std::string_view what) {
    for (unsigned char b : bytes) {
      const int32_t id = static_cast<int32_t>(b) + 3;
      if (id >= vocab_size()) {
        throw Error(source_ + ": cannot encode " + std::string(what) +
                    ": the vocabulary has neither it nor byte-fallback token <0x" +
                    "0123456789ABCDEF"[b >> 4] + "0123456789ABCDEF"[b & 15] + ">");
      }
      tokens.push_back(id);
    }
  };

  if (!text.empty()) {
    // The dummy prefix; vocabularies without " " (small test models) fall back to its byte.
    const int32_t space = lookup(" ");
    if (space >= 0) {
      tokens.push_back(space);
    } else {
      push_bytes(" ", "the dummy-prefix space");
    }
  }

  // One token per UTF-8 code point (at most 4 bytes), else its bytes. Unlike
  // run.c, a run of more than 3 continuation bytes starts a new group instead
  // of overflowing run.c's buffer; well-formed UTF-8 encodes identically.
  size_t start = 0;
  while (start < text.size()) {
    size_t end = start + 1;
    while (end < text.size() && end - start < 4 &&
           (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) {
      ++end;
    }
    const std::string_view cp = text.substr(start, end - start);
    const int32_t id = lookup(cp);
    if (id >= 0) {
      tokens.push_back(id);
    } else {
      push_bytes(cp, "the text's bytes at offset " + std::to_string(start));
    }
    start = end;
  }

  // Merge the adjacent pair whose concatenation scores best, until none exists.
  // Like run.c, BOS takes part in the pair search; no merge with it exists.
  std::string merged;
  while (true) {
    float best_score = -1e10f;
    int32_t best_id = -1;
    size_t best_idx = 0;
    for (size_t i = 0; i + 1 < tokens.size(); ++i) {
      merged = vocab_[static_cast<size_t>(tokens[i])];
      merged += vocab_[static_cast<size_t>(tokens[i + 1])];
      const int32_t id = lookup(merged);
      if (id >= 0 && scores_[static_cast<size_t>(id)] > best_score) {
        best_score = scores_[static_cast<size_t>(id)];
        best_id = id;
        best_idx = i;
      }
    }
    if (best_id < 0) break;
    tokens[best_idx] = best_id;
    tokens.erase(tokens.begin() + static_cast<std::ptrdiff_t>(best_idx) + 1);
  }

  if (eos) tokens.push_back(kEosToken);
  return tokens;
}

std::string Tokenizer::decode(int32_t prev, int32_t token) const {
  std::string_view p = piece(token);
  if (prev == kBosToken && !p.empty() && p[0] == ' ') p.remove_prefix(1);
  // Raw-byte tokens look like "<0x0A>".
  if (p.size() == 6 && p.substr(0, 3) == "<0x" && p[5] == '>' &&
      std::isxdigit(static_cast<unsigned char>(p[3])) &&
      std::isxdigit(static_cast<unsigned char>(p[4]))) {
    const auto byte = static_cast<char>(std::stoi(std::string(p.substr(3, 2)), nullptr, 16));
    return std::string(1, byte);
  }
  return std::string(p);
}

bool Tokenizer::is_printable_piece(std::string_view piece) {
  if (piece.empty()) return false;
  if (piece.size() == 1) {
    const auto c = static_cast<unsigned char>(piece[0]);
    if (!(std::isprint(c) || std::isspace(c))) return false;
  }
  return true;
}

}  // namespace llama
