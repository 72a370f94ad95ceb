// BpeTokenizer: the pipeline's checks at construction, encode and decode.
#include "llama/tokenizers/bpe_tokenizer.hpp"

#include <algorithm>
#include <unordered_map>

#include "limits.hpp"
#include "llama/error.hpp"
#include "pipeline.hpp"

namespace llama {
namespace {

constexpr std::string_view kMark = "\xE2\x96\x81";  // "▁", SentencePiece's space

std::vector<AddedToken> select(const std::vector<AddedToken>& all, bool normalized) {
  std::vector<AddedToken> out;
  for (const AddedToken& t : all) {
    if (t.normalized == normalized) out.push_back(t);
  }
  return out;
}

int64_t check_added(const BpeTokenizerSpec& spec) {
  const auto& vocab = spec.model.vocab;
  int64_t size = static_cast<int64_t>(vocab.size());
  for (const AddedToken& t : spec.added_tokens) {
    if (t.id < 0)
      throw Error(spec.source + ": added token \"" + t.content + "\" has a negative id");
    if (t.content.empty()) {
      throw Error(spec.source + ": added token " + std::to_string(t.id) + " is empty");
    }
    if (t.id < static_cast<int64_t>(vocab.size()) &&
        vocab[static_cast<size_t>(t.id)] != t.content) {
      throw Error(spec.source + ": added token \"" + t.content + "\" has id " +
                  std::to_string(t.id) + ", which the vocabulary gives to \"" +
                  vocab[static_cast<size_t>(t.id)] + "\"");
    }
    size = std::max(size, int64_t{t.id} + 1);
  }
  // Ids past the vocabulary must be covered by added tokens, once each.
  std::vector<const AddedToken*> beyond(static_cast<size_t>(size - int64_t(vocab.size())), nullptr);
  std::unordered_map<std::string_view, int32_t> content_ids;
  for (const AddedToken& t : spec.added_tokens) {
    const auto [it, fresh] = content_ids.emplace(t.content, t.id);
    if (!fresh && it->second != t.id) {
      throw Error(spec.source + ": added token \"" + t.content + "\" has two ids, " +
                  std::to_string(it->second) + " and " + std::to_string(t.id));
    }
    if (t.id < static_cast<int64_t>(vocab.size())) continue;
    const AddedToken*& slot = beyond[static_cast<size_t>(t.id - int64_t(vocab.size()))];
    if (slot != nullptr && slot->content != t.content) {
      throw Error(spec.source + ": id " + std::to_string(t.id) + " is both \"" + slot->content +
                  "\" and \"" + t.content + "\"");
    }
    slot = &t;
  }
  for (size_t i = 0; i < beyond.size(); ++i) {
    if (beyond[i] == nullptr) {
      throw Error(spec.source + ": id " + std::to_string(vocab.size() + i) +
                  " is neither in the vocabulary nor an added token (ids must be contiguous)");
    }
  }
  return size;
}

}  // namespace

BpeTokenizer::Impl::Impl(BpeTokenizerSpec& spec)
    : vocab_size(check_added(spec)),
      source(spec.source),
      description(spec.description),
      model(std::move(spec.model), spec.source),
      normalizer(spec.normalizer),
      pre_tokenizer(spec.pre_tokenizer, spec.source),
      raw_added(select(spec.added_tokens, false)),
      normalized_added(select(spec.added_tokens, true)),
      prefix_ids(spec.prefix_ids),
      suffix_ids(spec.suffix_ids),
      decoder(spec.decoder, spec.source),
      added(spec.added_tokens) {}

BpeTokenizer::BpeTokenizer(BpeTokenizerSpec spec) {
  bpe::check_pipeline_limits(spec);
  impl_ = std::make_unique<Impl>(spec);
  Impl& m = *impl_;
  m.extra.resize(static_cast<size_t>(m.vocab_size - m.model.vocab_size()));
  m.special.assign(static_cast<size_t>(m.vocab_size), 0);
  for (const AddedToken& t : m.added) {
    if (t.id >= m.model.vocab_size())
      m.extra[static_cast<size_t>(t.id - m.model.vocab_size())] = t.content;
    if (t.special) m.special[static_cast<size_t>(t.id)] = 1;
  }
  auto check_id = [&](int32_t id, const char* what) {
    if (id < -1 || id >= m.vocab_size) {
      throw Error(m.source + ": " + what + " id " + std::to_string(id) + " outside the vocabulary");
    }
  };
  for (int32_t id : m.prefix_ids) check_id(id, "post-processor");
  for (int32_t id : m.suffix_ids) check_id(id, "post-processor");
  check_id(spec.special.bos, "BOS");
  check_id(spec.special.unk, "unk");
  check_id(spec.special.pad, "pad");
  for (int32_t id : spec.special.eos) check_id(id, "EOS");
  for (NormalizerStep& s : m.normalizer) {
    if (s.kind == NormalizerStep::Kind::replace && s.pattern.empty()) {
      throw Error(m.source + ": normalizer Replace has an empty pattern");
    }
  }
  m.cut_at_mark = spec.pre_tokenizer.empty() && !spec.model.ignore_merges &&
                  m.model.merges_never_cross_before(kMark);
  special_ = std::move(spec.special);
}

BpeTokenizer::~BpeTokenizer() = default;

// Each step's output is measured before it is made: a step that would pass
// what the encode has left refuses (48 Replace steps "a" -> "aa" would make
// 2^48 bytes of one "a").
std::string BpeTokenizer::Impl::normalize(std::string_view text, bpe::Budget& budget) const {
  std::string s(text);
  for (size_t i = 0; i < normalizer.size(); ++i) {
    const NormalizerStep& step = normalizer[i];
    // Sizes stay below budget.total() <= 2^30 and strings below 256 bytes: no overflow.
    uint64_t size = s.size();
    if (step.kind == NormalizerStep::Kind::prepend) {
      if (!s.empty()) size += step.content.size();
    } else {
      for (size_t hit = s.find(step.pattern); hit != std::string::npos;
           hit = s.find(step.pattern, hit + step.pattern.size())) {
        size = size - step.pattern.size() + step.content.size();
      }
    }
    if (size > budget.left()) {
      throw Error(source + ": normalizer step " + std::to_string(i) +
                  (step.kind == NormalizerStep::Kind::prepend ? " (Prepend)" : " (Replace)") +
                  " would make the text longer than the " + std::to_string(budget.total()) +
                  " bytes allowed for this input (" + std::to_string(bpe::kNormalizedPerByte) +
                  " per input byte + " + std::to_string(bpe::kNormalizedSlack) + ", at most " +
                  std::to_string(bpe::kNormalizedMax) + ")");
    }
    if (step.kind == NormalizerStep::Kind::prepend) {
      if (!s.empty()) s.insert(0, step.content);
      continue;
    }
    std::string out;
    out.reserve(size);
    size_t at = 0;
    for (size_t hit = s.find(step.pattern); hit != std::string::npos;
         hit = s.find(step.pattern, at)) {
      out.append(s, at, hit - at).append(step.content);
      at = hit + step.pattern.size();
    }
    out.append(s, at, std::string::npos);
    s = std::move(out);
  }
  budget.take(s.size());  // fits: checked above
  return s;
}

// One stretch of text without added tokens: words through the model.
void BpeTokenizer::Impl::encode_text(std::string_view text, size_t offset, bpe::Budget& regex_work,
                                     std::vector<int32_t>& out) const {
  // Words repeat: remember the ids of words that needed merging.
  std::unordered_map<std::string, std::pair<size_t, size_t>> cache;  // word -> [begin, end) in out
  std::string key;
  auto on_word = [&](std::string_view word, size_t at) {
    const int32_t whole = model.whole_word(word);
    if (whole >= 0) {
      out.push_back(whole);
      return;
    }
    if (word.size() <= 64) {
      key.assign(word);
      const auto it = cache.find(key);
      if (it != cache.end()) {
        const auto [b, e] = it->second;
        for (size_t i = b; i < e; ++i) {
          const int32_t id = out[i];  // push_back may move `out`
          out.push_back(id);
        }
        return;
      }
    }
    const size_t begin = out.size();
    model.encode_word(word, at, out);
    if (word.size() <= 64 && cache.size() < 65536)
      cache.emplace(word, std::pair{begin, out.size()});
  };
  if (!cut_at_mark) {
    pre_tokenizer.split(text, offset, regex_work, on_word);
    return;
  }
  // No pre-tokenizer: the model sees the whole text, and since no merge can
  // join a character to a following "▁", cutting there gives the same ids.
  size_t start = 0;
  for (size_t at = text.find(kMark, 1); at != std::string_view::npos;
       at = text.find(kMark, at + kMark.size())) {
    if (at >= kMark.size() && text.compare(at - kMark.size(), kMark.size(), kMark) == 0) continue;
    on_word(text.substr(start, at - start), offset + start);
    start = at;
  }
  on_word(text.substr(start), offset + start);
}

std::vector<int32_t> BpeTokenizer::encode(std::string_view text,
                                          const EncodeOptions& options) const {
  const Impl& m = *impl_;
  std::vector<int32_t> out;
  out.reserve(text.size() / 3 + 4);
  if (options.add_special) out.insert(out.end(), m.prefix_ids.begin(), m.prefix_ids.end());
  // What the normalizer may produce and the regexes spend, per input byte (limits.hpp).
  bpe::Budget normalized(bpe::scaled_limit(text.size(), bpe::kNormalizedPerByte,
                                           bpe::kNormalizedSlack, bpe::kNormalizedMax));
  bpe::Budget regex_work(
      bpe::scaled_limit(text.size(), bpe::kRegexWorkPerByte, bpe::kRegexWorkSlack));
  std::vector<bpe::Segment> segments;
  m.raw_added.split(text, 0, options.parse_special, segments);
  std::vector<bpe::Segment> inner;
  for (const bpe::Segment& seg : segments) {
    if (seg.id >= 0) {
      out.push_back(seg.id);
      continue;
    }
    const std::string text_n = m.normalize(seg.text, normalized);
    if (m.normalized_added.empty()) {
      m.encode_text(text_n, seg.offset, regex_work, out);
      continue;
    }
    inner.clear();
    m.normalized_added.split(text_n, seg.offset, options.parse_special, inner);
    for (const bpe::Segment& s : inner) {
      if (s.id >= 0) {
        out.push_back(s.id);
      } else {
        m.encode_text(s.text, s.offset, regex_work, out);
      }
    }
  }
  if (options.add_special) out.insert(out.end(), m.suffix_ids.begin(), m.suffix_ids.end());
  return out;
}

const std::string& BpeTokenizer::Impl::piece(int32_t id) const {
  if (id < 0 || id >= vocab_size) {
    throw Error("token id " + std::to_string(id) + " outside the vocabulary of " +
                std::to_string(vocab_size));
  }
  if (id < model.vocab_size()) return model.piece(id);
  return extra[static_cast<size_t>(id - model.vocab_size())];
}

std::string BpeTokenizer::decode(std::span<const int32_t> ids, bool skip_special) const {
  bpe::DecoderStream stream(impl_->decoder);
  std::string out;
  for (const int32_t id : ids) {
    const std::string& p = impl_->piece(id);
    if (skip_special && is_special(id)) continue;
    out += stream.push(p);
  }
  return out + stream.finish();
}

std::string BpeTokenizer::decode_token(int32_t prev, int32_t token) const {
  bpe::DecoderStream stream(impl_->decoder, /*lossless=*/prev >= 0);
  std::string out = stream.push(impl_->piece(token));
  return out + stream.finish();
}

namespace {

class BpeStream final : public TextStream {
 public:
  explicit BpeStream(const BpeTokenizer& tok, const bpe::DecoderChain& chain)
      : tok_(tok), stream_(chain) {}
  std::string push(int32_t token) override {
    const std::string_view p = tok_.piece(token);
    if (tok_.is_special(token)) return {};
    return stream_.push(p);
  }
  std::string finish() override { return stream_.finish(); }

 private:
  const BpeTokenizer& tok_;
  bpe::DecoderStream stream_;
};

}  // namespace

std::unique_ptr<TextStream> BpeTokenizer::stream() const {
  return std::make_unique<BpeStream>(*this, impl_->decoder);
}

std::string BpeTokenizer::description() const { return impl_->description; }
int64_t BpeTokenizer::vocab_size() const { return impl_->vocab_size; }
std::string_view BpeTokenizer::piece(int32_t id) const { return impl_->piece(id); }

int32_t BpeTokenizer::lookup(std::string_view piece) const {
  const int32_t id = impl_->model.lookup(piece);
  if (id >= 0) return id;
  for (const AddedToken& t : impl_->added) {
    if (t.content == piece) return t.id;
  }
  return -1;
}

bool BpeTokenizer::is_special(int32_t id) const {
  return id >= 0 && id < impl_->vocab_size && impl_->special[static_cast<size_t>(id)] != 0;
}

}  // namespace llama
