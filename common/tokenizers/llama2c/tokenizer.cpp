// Llama2cTokenizer: tokenizer.bin reading with bounds checks, lookup, run.c's
// decode and output filter (the encoder is in encode.cpp).
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
  bool at_end() const { return pos_ == bytes_.size(); }

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

Llama2cTokenizer::Llama2cTokenizer(const std::string& path, int64_t vocab_size) {
  MappedFile file(path);
  *this = parse(file.bytes(), path, vocab_size);
}

Llama2cTokenizer Llama2cTokenizer::parse(std::span<const std::byte> bytes,
                                         const std::string& source, int64_t vocab_size) {
  if (vocab_size < 0 || vocab_size > std::numeric_limits<int32_t>::max()) {
    throw Error(source + ": vocab_size " + std::to_string(vocab_size) + " out of range");
  }
  Llama2cTokenizer t;
  t.source_ = source;
  ByteReader in(bytes, source);
  t.max_token_length_ = in.read<int32_t>("max_token_length");
  if (t.max_token_length_ <= 0 || t.max_token_length_ > kMaxPieceBytes) {
    throw Error(source + ": max_token_length (int32 at offset 0) is " +
                std::to_string(t.max_token_length_) + ", out of range [1, " +
                std::to_string(kMaxPieceBytes) + "]");
  }
  // Each entry takes at least 8 bytes: refuse an impossible count before reserving.
  const uint64_t most = bytes.size() / 8;
  if (static_cast<uint64_t>(vocab_size) > most) {
    throw Error(source + ": has fewer than the model's " + std::to_string(vocab_size) +
                " entries (" + std::to_string(bytes.size()) + " bytes)");
  }
  const bool to_end = vocab_size == 0;  // every entry up to the end of the file
  if (!to_end) {
    t.vocab_.reserve(static_cast<size_t>(vocab_size));
    t.scores_.reserve(static_cast<size_t>(vocab_size));
  }
  for (int64_t i = 0; to_end ? !in.at_end() : i < vocab_size; ++i) {
    if (i >= std::numeric_limits<int32_t>::max()) {
      throw Error(source + ": more than 2^31 - 1 entries");
    }
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
  if (t.vocab_.empty()) throw Error(source + ": holds no entries");
  t.build_index();
  t.set_special();
  return t;
}

void Llama2cTokenizer::build_index() {
  // run.c looks strings up with bsearch over a sorted copy; with duplicate
  // strings the first id wins here, and the Llama 2 vocabulary has none.
  index_.clear();
  index_.reserve(vocab_.size());
  for (size_t i = 0; i < vocab_.size(); ++i) {
    index_.emplace(std::string_view(vocab_[i]), static_cast<int32_t>(i));
  }
}

void Llama2cTokenizer::set_special() {
  // run.c's ids, where the vocabulary has them (small test vocabularies may not).
  special_ = SpecialTokens{};
  if (vocab_size() > kBosToken) special_.bos = kBosToken;
  if (vocab_size() > kEosToken) special_.eos = {kEosToken};
  if (vocab_size() > 0) special_.unk = 0;
}

Llama2cTokenizer::Llama2cTokenizer(const Llama2cTokenizer& other)
    : Tokenizer(other),
      vocab_(other.vocab_),
      scores_(other.scores_),
      max_token_length_(other.max_token_length_),
      source_(other.source_) {
  build_index();
}

Llama2cTokenizer& Llama2cTokenizer::operator=(const Llama2cTokenizer& other) {
  if (this != &other) *this = Llama2cTokenizer(other);
  return *this;
}

std::string_view Llama2cTokenizer::piece(int32_t token) const {
  if (token < 0 || token >= vocab_size()) {
    throw Error("token id " + std::to_string(token) + " outside the vocabulary of " +
                std::to_string(vocab_size()));
  }
  return vocab_[static_cast<size_t>(token)];
}

int32_t Llama2cTokenizer::lookup(std::string_view s) const {
  const auto it = index_.find(s);
  return it == index_.end() ? -1 : it->second;
}

std::string Llama2cTokenizer::decode_token(int32_t prev, int32_t token) const {
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

std::string Llama2cTokenizer::decode(std::span<const int32_t> ids, bool skip_special) const {
  std::string out;
  int32_t prev = -1;
  for (const int32_t id : ids) {
    if (!(skip_special && is_special(id))) out += decode_token(prev, id);
    prev = id;
  }
  return out;
}

namespace {

class Llama2cStream final : public TextStream {
 public:
  explicit Llama2cStream(const Llama2cTokenizer& tok) : tok_(tok) {}
  std::string push(int32_t token) override {
    const int32_t prev = prev_;
    prev_ = token;
    if (token == kBosToken) return {};
    std::string piece = tok_.decode_token(prev, token);
    return Llama2cTokenizer::is_printable_piece(piece) ? piece : std::string();
  }
  std::string finish() override { return {}; }

 private:
  const Llama2cTokenizer& tok_;
  int32_t prev_ = -1;
};

}  // namespace

std::unique_ptr<TextStream> Llama2cTokenizer::stream() const {
  return std::make_unique<Llama2cStream>(*this);
}

bool Llama2cTokenizer::is_printable_piece(std::string_view piece) {
  if (piece.empty()) return false;
  if (piece.size() == 1) {
    const auto c = static_cast<unsigned char>(piece[0]);
    if (!(std::isprint(c) || std::isspace(c))) return false;
  }
  return true;
}

}  // namespace llama
