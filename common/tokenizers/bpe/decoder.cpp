// DecoderStream: the decoder steps, each fed tokens and passing its output on.
#include "decoder.hpp"

#include "byte_level.hpp"
#include "limits.hpp"
#include "llama/error.hpp"

namespace llama::bpe {
namespace {

// Every `from` in s replaced by `to`, or false (s unchanged) when the result
// would be longer than `limit` bytes: counted before anything grows.
bool replace_all(std::string& s, std::string_view from, std::string_view to, uint64_t limit) {
  if (from.empty()) return true;
  uint64_t hits = 0;
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + from.size())) {
    ++hits;
  }
  if (hits == 0) return true;
  // hits <= s.size() and to.size() <= kMaxStepString: no overflow.
  if (s.size() - hits * from.size() + hits * to.size() > limit) return false;
  std::string out;
  out.reserve(s.size() - hits * from.size() + hits * to.size());
  size_t at = 0;
  for (size_t hit = s.find(from); hit != std::string::npos; hit = s.find(from, at)) {
    out.append(s, at, hit - at).append(to);
    at = hit + from.size();
  }
  out.append(s, at, std::string::npos);
  s = std::move(out);
  return true;
}

uint64_t token_limit(size_t bytes) { return scaled_limit(bytes, kDecodedPerByte, kDecodedSlack); }

// tokenizers' ByteFallback test: "<0xXX>" with two hex digits.
int byte_token(std::string_view t) {
  if (t.size() != 6 || t.substr(0, 3) != "<0x" || t[5] != '>') return -1;
  int v = 0;
  for (char c : t.substr(3, 2)) {
    const int d = (c >= '0' && c <= '9')   ? c - '0'
                  : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                  : (c >= 'a' && c <= 'f') ? c - 'a' + 10
                                           : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

}  // namespace

DecoderChain::DecoderChain(std::vector<DecoderStep> steps, const std::string& source)
    : steps_(std::move(steps)), source_(source) {
  for (size_t i = 0; i < steps_.size(); ++i) {
    const DecoderStep& s = steps_[i];
    if (s.kind == DecoderStep::Kind::strip && (s.start < 0 || s.stop < 0 || s.content.empty())) {
      throw Error(source + ": decoder Strip needs content and start, stop >= 0");
    }
    if (s.kind == DecoderStep::Kind::byte_level && i + 1 != steps_.size()) {
      throw Error(source + ": decoder ByteLevel must be the last step");
    }
  }
}

DecoderStream::DecoderStream(const DecoderChain& chain, bool lossless)
    : chain_(chain), state_(chain.steps().size()), lossless_(lossless) {
  bool whole = false;
  for (size_t i = 0; i < state_.size(); ++i) {
    const DecoderStep& s = chain_.steps()[i];
    state_[i].whole = whole;
    state_[i].to_strip = lossless ? 0 : s.start;
    if (s.kind == DecoderStep::Kind::fuse || s.kind == DecoderStep::Kind::byte_level) whole = true;
  }
}

// Feeds one token to step `step`; what falls out of the last step goes to `out`.
void DecoderStream::feed(size_t step, std::string token, std::string& out, uint64_t limit) {
  if (step == state_.size()) {
    out += token;
    return;
  }
  const DecoderStep& s = chain_.steps()[step];
  StepState& st = state_[step];
  switch (s.kind) {
    case DecoderStep::Kind::replace:
      if (!replace_all(token, s.pattern, s.content, limit)) {
        throw Error(chain_.source() + ": decoder step " + std::to_string(step) +
                    " (Replace) would make a token longer than " + std::to_string(limit) +
                    " bytes (" + std::to_string(kDecodedPerByte) + " per byte of its piece + " +
                    std::to_string(kDecodedSlack) + ")");
      }
      return feed(step + 1, std::move(token), out, limit);
    case DecoderStep::Kind::byte_fallback: {
      const int b = byte_token(token);
      if (b >= 0) {
        st.run += static_cast<char>(b);
        ++st.run_tokens;
        return;
      }
      flush(step, out);  // ends the run; flush passes it (and only it) on
      return feed(step + 1, std::move(token), out, limit);
    }
    case DecoderStep::Kind::fuse:
      return feed(step + 1, std::move(token), out, limit);
    case DecoderStep::Kind::byte_level: {
      std::string bytes;
      if (!byte_level_map().unmap(token, bytes)) bytes = token;  // tokenizers: raw text then
      return feed(step + 1, std::move(bytes), out, limit);
    }
    case DecoderStep::Kind::strip: {
      const std::string& c = s.content;
      auto starts = [&](const std::string& t, size_t at) {
        return t.compare(at, c.size(), c) == 0;
      };
      auto ends = [&](const std::string& t, size_t end, size_t begin) {
        return end >= begin + c.size() && t.compare(end - c.size(), c.size(), c) == 0;
      };
      size_t begin = 0;
      if (!st.whole) {
        // Each token on its own.
        for (int32_t left = lossless_ ? 0 : s.start; left > 0 && starts(token, begin); --left) {
          begin += c.size();
        }
        size_t end = token.size();
        for (int32_t right = s.stop; right > 0 && ends(token, end, begin); --right) end -= c.size();
        return feed(step + 1, token.substr(begin, end - begin), out, limit);
      }
      // One text: strip its start once, hold back a possible end.
      std::string text = st.run + token;
      st.run.clear();
      while (st.to_strip > 0 && begin < text.size()) {
        if (!starts(text, begin)) {
          st.to_strip = 0;
          break;
        }
        begin += c.size();
        --st.to_strip;
      }
      if (begin < text.size()) st.to_strip = 0;
      size_t keep = text.size();
      for (int32_t right = s.stop; right > 0 && ends(text, keep, begin); --right) keep -= c.size();
      st.run = text.substr(keep);
      return feed(step + 1, text.substr(begin, keep - begin), out,
                  std::max(limit, token_limit(keep - begin)));
    }
  }
}

void DecoderStream::flush(size_t step, std::string& out) {
  const DecoderStep& s = chain_.steps()[step];
  StepState& st = state_[step];
  if (s.kind == DecoderStep::Kind::byte_fallback && st.run_tokens > 0) {
    std::string run = std::move(st.run);
    const size_t n = st.run_tokens;
    st.run.clear();
    st.run_tokens = 0;
    if (is_valid_utf8(run)) {
      const uint64_t limit = token_limit(run.size());
      return feed(step + 1, std::move(run), out, limit);
    }
    for (size_t i = 0; i < n; ++i) {
      feed(step + 1, std::string(kReplacementChar), out, token_limit(kReplacementChar.size()));
    }
  }
  // strip over the whole text: the held trailing characters end the text, dropped.
  if (s.kind == DecoderStep::Kind::strip && st.whole) st.run.clear();
}

std::string DecoderStream::push(std::string_view piece) {
  std::string out;
  feed(0, std::string(piece), out, token_limit(piece.size()));
  return lossless_ ? out : utf8_.push(out);
}

std::string DecoderStream::finish() {
  std::string out;
  for (size_t i = 0; i < state_.size(); ++i) {
    std::string flushed;
    flush(i, flushed);
    out += flushed;
  }
  if (lossless_) return out;
  std::string text = utf8_.push(out);
  return text + utf8_.finish();
}

}  // namespace llama::bpe
