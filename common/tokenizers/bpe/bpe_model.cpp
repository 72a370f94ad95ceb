// BpeModel: vocabulary checks, the pair table, initial symbols and merges.
#include "bpe_model.hpp"

#include <bit>
#include <cstdio>
#include <optional>

#include "llama/error.hpp"
#include "pair_merge.hpp"
#include "utf8.hpp"

namespace llama {

namespace {
uint64_t hash_bytes(std::string_view s) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a, then a multiply to spread it
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return (h ^ (h >> 29)) * 0xBF58476D1CE4E5B9ull;
}
}  // namespace

PieceIndex::PieceIndex(std::span<const std::string> pieces) : pieces_(pieces) {
  size_t n = 16;
  while (n < pieces.size() * 2) n *= 2;
  slots_.assign(n, Slot{0, -1});
  // The first id of a duplicated piece wins.
  for (size_t id = 0; id < pieces.size(); ++id) {
    const uint64_t h = hash_bytes(pieces[id]);
    const auto tag = static_cast<uint32_t>(h >> 32);
    for (size_t i = h & (n - 1);; i = (i + 1) & (n - 1)) {
      if (slots_[i].id < 0) {
        slots_[i] = Slot{tag, static_cast<int32_t>(id)};
        break;
      }
      if (slots_[i].tag == tag && pieces_[static_cast<size_t>(slots_[i].id)] == pieces[id]) break;
    }
  }
}

int32_t PieceIndex::find(std::string_view piece) const {
  const size_t mask = slots_.size() - 1;
  const uint64_t h = hash_bytes(piece);
  const auto tag = static_cast<uint32_t>(h >> 32);
  for (size_t i = h & mask;; i = (i + 1) & mask) {
    const Slot& s = slots_[i];
    if (s.id < 0) return -1;
    if (s.tag == tag && pieces_[static_cast<size_t>(s.id)] == piece) return s.id;
  }
}

namespace bpe {

PairTable::PairTable(size_t expected) {
  // At most 3/4 full: Llama 3's 280K merges fit 2^19 slots (8 MiB).
  size_t n = 16;
  while (n * 3 < expected * 4) n *= 2;
  entries_.resize(n);
  mask_ = n - 1;
  shift_ = 64 - std::countr_zero(n);
}

void PairTable::grow() {
  std::vector<Entry> old = std::move(entries_);
  entries_.assign(old.size() * 2, Entry{});
  mask_ = entries_.size() - 1;
  shift_ = 64 - std::countr_zero(entries_.size());
  size_ = 0;
  for (const Entry& e : old) {
    if (e.key != kEmpty) {
      insert(static_cast<int32_t>(e.key >> 32), static_cast<int32_t>(e.key & 0xFFFFFFFFu), e.rank,
             e.merged);
    }
  }
}

void PairTable::insert(int32_t left, int32_t right, int32_t rank, int32_t merged) {
  if ((size_ + 1) * 4 > entries_.size() * 3) grow();
  const uint64_t key = pack(left, right);
  for (size_t i = slot(key);; i = (i + 1) & mask_) {
    Entry& e = entries_[i];
    if (e.key == kEmpty) {
      e = Entry{key, rank, merged};
      ++size_;
      return;
    }
    if (e.key == key) {
      e.rank = rank;
      e.merged = merged;
      return;
    }
  }
}

BpeModel::BpeModel(BpeModelSpec spec, const std::string& source)
    : vocab_(std::move(spec.vocab)),
      index_(vocab_),
      pairs_(spec.merges.size()),
      scores_(std::move(spec.scores)),
      unk_(spec.unk),
      fuse_unk_(spec.fuse_unk),
      byte_fallback_(spec.byte_fallback),
      ignore_merges_(spec.ignore_merges),
      source_(source) {
  const auto n = static_cast<int64_t>(vocab_.size());
  if (n == 0) throw Error(source_ + ": the model's vocabulary is empty");
  if (n > INT32_MAX) throw Error(source_ + ": the model's vocabulary is too large");
  if (unk_ < -1 || unk_ >= n) {
    throw Error(source_ + ": unk id " + std::to_string(unk_) + " outside the vocabulary");
  }
  if (!scores_.empty() && static_cast<int64_t>(scores_.size()) != n) {
    throw Error(source_ + ": " + std::to_string(scores_.size()) + " scores for " +
                std::to_string(n) + " vocabulary entries");
  }
  if (!scores_.empty() && !spec.merges.empty()) {
    throw Error(source_ + ": a model takes merges or scores, not both");
  }
  std::string joined;
  for (size_t rank = 0; rank < spec.merges.size(); ++rank) {
    const auto [a, b] = spec.merges[rank];
    if (a < 0 || a >= n || b < 0 || b >= n) {
      throw Error(source_ + ": merge " + std::to_string(rank) +
                  " names an id outside the vocabulary");
    }
    joined = vocab_[static_cast<size_t>(a)] + vocab_[static_cast<size_t>(b)];
    const int32_t merged = index_.find(joined);
    if (merged < 0) {
      throw Error(source_ + ": merge " + std::to_string(rank) + " (\"" + vocab_[a] + "\" \"" +
                  vocab_[b] + "\") makes \"" + joined + "\", which is not in the vocabulary");
    }
    pairs_.insert(a, b, static_cast<int32_t>(rank), merged);
  }
  // Characters below U+0800 (ASCII, and every byte-level character) by table.
  char_ids_.assign(0x800, -1);
  std::string ch;
  for (uint32_t cp = 0; cp < 0x800; ++cp) {
    ch.clear();
    append_code_point(ch, cp);
    char_ids_[cp] = index_.find(ch);
  }
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    byte_ids_[static_cast<size_t>(b)] = index_.find(name);
  }
}

int32_t BpeModel::byte_of(int32_t id) const {
  if (id < 0 || id >= vocab_size()) return -1;
  const std::string& p = vocab_[static_cast<size_t>(id)];
  if (p.size() != 6 || p.compare(0, 3, "<0x") != 0 || p[5] != '>') return -1;
  unsigned v = 0;
  for (size_t i = 3; i < 5; ++i) {
    const char c = p[i];
    const int d = (c >= '0' && c <= '9') ? c - '0' : (c >= 'A' && c <= 'F') ? c - 'A' + 10 : -1;
    if (d < 0) return -1;
    v = v * 16 + static_cast<unsigned>(d);
  }
  return byte_ids_[v] == id ? static_cast<int32_t>(v) : -1;
}

bool BpeModel::merges_never_cross_before(std::string_view mark) const {
  // Only merge results matter, but checking every piece is simpler and stricter.
  for (const std::string& p : vocab_) {
    for (size_t at = p.find(mark, 1); at != std::string::npos; at = p.find(mark, at + 1)) {
      if (at < mark.size() || p.compare(at - mark.size(), mark.size(), mark) != 0) return false;
    }
  }
  return true;
}

void BpeModel::initial_symbols(std::string_view word, size_t offset,
                               std::vector<int32_t>& out) const {
  bool last_unk = false;
  for (size_t i = 0; i < word.size();) {
    const auto c0 = static_cast<unsigned char>(word[i]);
    size_t n = c0 < 0x80 ? 1 : valid_char_length(word, i);
    if (n == 0) n = invalid_prefix_length(word, i);  // not a character: its bytes
    const std::string_view ch = word.substr(i, n);
    int32_t id;
    if (n == 1 && c0 < 0x80) {
      id = char_ids_[c0];
    } else if (n == 2 && valid_char_length(word, i) == 2) {
      id = char_ids_[decode_char(word, i, 2)];
    } else {
      id = index_.find(ch);
    }
    if (id >= 0) {
      out.push_back(id);
      last_unk = false;
      i += n;
      continue;
    }
    bool bytes_ok = byte_fallback_;
    for (size_t k = 0; bytes_ok && k < n; ++k) {
      bytes_ok = byte_ids_[static_cast<unsigned char>(ch[k])] >= 0;
    }
    if (bytes_ok) {
      for (unsigned char b : ch) out.push_back(byte_ids_[b]);
      last_unk = false;
    } else if (unk_ >= 0) {
      if (!(fuse_unk_ && last_unk)) out.push_back(unk_);
      last_unk = true;
    } else {
      throw Error(source_ + ": cannot encode the input's bytes at offset " +
                  std::to_string(offset + i) + ": the vocabulary has no token for them" +
                  (byte_fallback_ ? " and no <0xXX> byte tokens" : "") + " and no unk token");
    }
    i += n;
  }
}

void BpeModel::encode_word(std::string_view word, size_t offset, std::vector<int32_t>& out) const {
  if (word.empty()) return;
  if (ignore_merges_) {
    const int32_t whole = index_.find(word);
    if (whole >= 0) {
      out.push_back(whole);
      return;
    }
  }
  std::vector<int32_t> symbols;
  symbols.reserve(word.size());
  initial_symbols(word, offset, symbols);
  if (scores_.empty()) {
    merge_pairs<int32_t>(symbols, [&](int32_t a, int32_t b) -> std::optional<PairMerge<int32_t>> {
      const PairTable::Entry* e = pairs_.find(a, b);
      if (e == nullptr) return std::nullopt;
      return PairMerge<int32_t>{e->rank, e->merged};
    });
  } else {
    std::string joined;
    merge_pairs<float>(symbols, [&](int32_t a, int32_t b) -> std::optional<PairMerge<float>> {
      joined.assign(vocab_[static_cast<size_t>(a)]);
      joined += vocab_[static_cast<size_t>(b)];
      const int32_t id = index_.find(joined);
      if (id < 0) return std::nullopt;
      return PairMerge<float>{-scores_[static_cast<size_t>(id)], id};
    });
  }
  out.insert(out.end(), symbols.begin(), symbols.end());
}

}  // namespace bpe
}  // namespace llama
