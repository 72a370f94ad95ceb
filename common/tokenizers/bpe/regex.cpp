// Regex: PCRE2 compile (with JIT when available) and the budgeted match loop.
//
// Why every call is charged to a budget: PCRE2's match limit counts steps per
// start position ("for patterns that are not anchored, the count restarts from
// zero for each position in the subject", pcre2api), so 100 KB of 'a' against
// .{0,3000}.{0,3000}[^a] costs 9 million steps at each of 100,000 positions,
// every one under the limit; and a possessive or lookahead scan such as
// (?=[^x]*+\d) rereads the rest of the text at every position while counting
// one or two steps. So each call gets a window of the text (ending on a
// character boundary) and is charged before it runs:
//
// - At first, 16 steps per start position (Llama 3's pattern needs at most 8
//   per match with JIT, 20 interpreted) and 32 bytes, charged steps x (window
//   + the longest lookbehind): its worst case. PCRE2_PARTIAL_HARD reports an
//   attempt that reached the window's end (it would read further; $, \z and \b
//   there count as such) and the attempt is repeated with twice the window.
// - A position that needs more steps is retried alone with PCRE2's default
//   match limit (10^7) and a copy of the pattern with automatic callouts, which
//   stop it once its CPU time passes what the budget has left; it is charged
//   its CPU time in nanoseconds (at least its window). The product of steps and
//   window would refuse what is quick in fact (the 1 MB of spaces Llama 3's
//   \s*[\r\n]+ backtracks over, a step and a byte at a time), and only the
//   clock tells that from a scan repeated at every step.
//
// The match limit applies to JIT code too (it counts differently); the depth
// and heap limits only to the interpreter, which runs where JIT cannot; JIT
// keeps its frames on its own stack (up to 8 MiB).
#define PCRE2_CODE_UNIT_WIDTH 8
#include "regex.hpp"

#include <pcre2.h>
#include <time.h>

#include <algorithm>
#include <memory>
#include <optional>

#include "llama/error.hpp"

namespace llama::bpe {
namespace {

constexpr uint32_t kMatchLimit = 10'000'000;   // steps at one start position (PCRE2's default)
constexpr uint32_t kFirstLimit = 16;           // steps: what real patterns need per match
constexpr size_t kFirstWindow = 32;            // bytes: a pre-token and what follows it
constexpr uint32_t kDepthLimit = 100'000;      // nested backtracking frames (interpreter)
constexpr uint32_t kHeapLimitKiB = 64 * 1024;  // their memory (interpreter)
constexpr size_t kJitStackMax = 8 << 20;       // JIT's frames (the default 32 KiB is too small)

std::string pcre2_message(int code) {
  PCRE2_UCHAR buf[256];
  pcre2_get_error_message(code, buf, sizeof buf);
  return reinterpret_cast<const char*>(buf);
}

using Code = std::unique_ptr<pcre2_code, decltype(&pcre2_code_free)>;

Code compile(const std::string& pattern, uint32_t options, const std::string& source,
             const std::string& what) {
  int err = 0;
  PCRE2_SIZE err_offset = 0;
  Code code(pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                          PCRE2_UTF | PCRE2_UCP | options, &err, &err_offset, nullptr),
            &pcre2_code_free);
  if (!code) {
    throw Error(source + ": " + what + ": PCRE2 rejects the regex at offset " +
                std::to_string(err_offset) + ": " + pcre2_message(err));
  }
  return code;
}

bool continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

uint64_t thread_cpu_ns() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<uint64_t>(t.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(t.tv_nsec);
}

// The timed attempts' callout: every 256 callouts, the clock against the deadline.
struct Clock {
  uint64_t deadline_ns = 0;
  uint32_t calls = 0;
  bool expired = false;
};

int check_clock(pcre2_callout_block*, void* data) {
  auto* clock = static_cast<Clock*>(data);
  if ((++clock->calls & 255) != 0 || thread_cpu_ns() < clock->deadline_ns) return 0;
  clock->expired = true;
  return PCRE2_ERROR_CALLOUT;  // abandons the match
}

}  // namespace

Regex::Regex(const std::string& pattern, const std::string& source, const std::string& what)
    : source_(source), what_(what) {
  Code search = compile(pattern, 0, source, what);
  Code anchored = compile(pattern, PCRE2_ANCHORED, source, what);
  Code timed = compile(pattern, PCRE2_ANCHORED | PCRE2_AUTO_CALLOUT, source, what);
  uint32_t lookbehind = 0;
  pcre2_pattern_info(search.get(), PCRE2_INFO_MAXLOOKBEHIND, &lookbehind);
  if (lookbehind > kMaxLookbehind) {
    throw Error(source + ": " + what + ": a lookbehind reads " + std::to_string(lookbehind) +
                " characters back, more than " + std::to_string(kMaxLookbehind));
  }
  lookbehind_bytes_ = 4 * lookbehind;
  // Where JIT fails (no executable memory), pcre2_match interprets that code.
  const uint32_t modes = PCRE2_JIT_COMPLETE | PCRE2_JIT_PARTIAL_HARD;
  for (pcre2_code* code : {search.get(), anchored.get(), timed.get()}) {
    if (pcre2_jit_compile(code, modes) == 0) jit_ = true;
  }
  search_ = search.release();
  anchored_ = anchored.release();
  timed_ = timed.release();
}

Regex::~Regex() {
  for (void* code : {search_, anchored_, timed_}) pcre2_code_free(static_cast<pcre2_code*>(code));
}

// One for_each_match: the match state and the charging.
class RegexSearch {
 public:
  struct Found {
    size_t start, end;
  };

  RegexSearch(const Regex& re, std::string_view text, size_t offset, Budget& budget)
      : re_(re),
        text_(text),
        offset_(offset),
        budget_(budget),
        md_(pcre2_match_data_create_from_pattern(code(re.search_), nullptr),
            &pcre2_match_data_free),
        ctx_(pcre2_match_context_create(nullptr), &pcre2_match_context_free),
        stack_(re.jit_ ? pcre2_jit_stack_create(32 * 1024, kJitStackMax, nullptr) : nullptr,
               &pcre2_jit_stack_free) {
    if (!md_ || !ctx_ || (re.jit_ && !stack_)) {
      throw Error(re.source_ + ": " + re.what_ + ": out of memory for PCRE2");
    }
    pcre2_set_depth_limit(ctx_.get(), kDepthLimit);
    pcre2_set_heap_limit(ctx_.get(), kHeapLimitKiB);
    pcre2_set_callout(ctx_.get(), &check_clock, &clock_);  // only the timed code calls out
    if (stack_) pcre2_jit_stack_assign(ctx_.get(), nullptr, stack_.get());
  }

  // The leftmost match starting at or after `at`, as one unanchored search
  // from `at` over the whole text would find it.
  std::optional<Found> next(size_t at) {
    const size_t n = text_.size();
    while (at < n) {
      // The usual case: an unanchored search of a short window, charged for
      // every start position in it and refunded for those after the match.
      const size_t end = window_end(at, kFirstWindow);
      const uint64_t per_position = worst_case(end - at);
      charge(per_position * (end - at + 1), at);
      const int rc = run(re_.search_, at, end, kFirstLimit);
      if (rc >= 0 || rc == PCRE2_ERROR_PARTIAL) {
        const size_t s = pcre2_get_startchar(md_.get());
        budget_.give_back(per_position * (end - s));
        if (rc >= 0) return found();
        // The attempt at s read to the window's end; earlier ones did not match.
        if (anchored_at(s, std::max(kFirstWindow, 2 * (end - s))).rc >= 0) return found();
        at = next_char(s);
      } else if (rc == PCRE2_ERROR_NOMATCH) {
        at = end;  // no attempt reached the window's end, so more text changes nothing
      } else if (rc == PCRE2_ERROR_MATCHLIMIT) {
        // A start position needs more steps: try them one at a time up to it.
        size_t p = at;
        while (p < end) {
          const Attempt a = anchored_at(p, kFirstWindow);
          if (a.rc >= 0) return found();
          p = next_char(p);
          if (a.timed) break;
        }
        at = p;
      } else {
        fail(rc, at);
      }
    }
    return std::nullopt;
  }

  size_t next_char(size_t at) const {
    ++at;
    while (at < text_.size() && continuation(text_[at])) ++at;
    return at;
  }

 private:
  struct Attempt {
    int rc;
    bool timed;  // needed more than the first limit
  };

  static pcre2_code* code(void* c) { return static_cast<pcre2_code*>(c); }

  // The last character boundary at or before at + width, or the text's end.
  size_t window_end(size_t at, size_t width) const {
    if (width >= text_.size() - at) return text_.size();
    size_t end = at + width;
    while (end > at + 1 && continuation(text_[end])) --end;
    return end;
  }

  // The most an attempt at the first limit costs: each step reading the window.
  uint64_t worst_case(size_t window) const {
    return scaled_limit(kFirstLimit, window + re_.lookbehind_bytes_, 0);
  }

  [[noreturn]] void over_budget(size_t at) const {
    throw Error(re_.source_ + ": " + re_.what_ + ": matching at input offset " +
                std::to_string(offset_ + at) + " passes the regex budget for this input (" +
                std::to_string(kRegexWorkPerByte) + " units per input byte + " +
                std::to_string(kRegexWorkSlack) + " = " + std::to_string(budget_.total()) +
                "); the pattern backtracks or rescans too much");
  }

  void charge(uint64_t amount, size_t at) {
    if (!budget_.take(amount)) over_budget(at);
  }

  int run(void* c, size_t at, size_t end, uint32_t limit) {
    pcre2_set_match_limit(ctx_.get(), limit);
    const uint32_t options = PCRE2_NO_UTF_CHECK | (end < text_.size() ? PCRE2_PARTIAL_HARD : 0);
    return pcre2_match(code(c), reinterpret_cast<PCRE2_SPTR>(text_.data()), end, at, options,
                       md_.get(), ctx_.get());
  }

  // An attempt past the first limit: the callout copy, stopped by the clock.
  int run_timed(size_t at, size_t end) {
    const uint64_t floor = end - at + re_.lookbehind_bytes_;
    if (budget_.left() < floor) over_budget(at);
    const uint64_t start = thread_cpu_ns();
    clock_ = {start + std::min(budget_.left(), UINT64_MAX - start), 0, false};
    const int rc = run(re_.timed_, at, end, kMatchLimit);
    if (clock_.expired || !budget_.take(std::max(floor, thread_cpu_ns() - start))) {
      over_budget(at);
    }
    return rc;
  }

  // The match starting exactly at p, widening the window as the attempt
  // reads further and timing it once it needs more than the first limit.
  Attempt anchored_at(size_t p, size_t width) {
    bool timed = false;
    for (;;) {
      const size_t end = window_end(p, width);
      int rc = 0;
      if (timed) {
        rc = run_timed(p, end);
      } else {
        charge(worst_case(end - p), p);
        rc = run(re_.anchored_, p, end, kFirstLimit);
      }
      if (rc == PCRE2_ERROR_PARTIAL) {
        width *= 2;  // >= 32 bytes more: past any character the end was moved back over
      } else if (rc == PCRE2_ERROR_MATCHLIMIT && !timed) {
        timed = true;
      } else {
        if (rc < 0 && rc != PCRE2_ERROR_NOMATCH) fail(rc, p);
        return {rc, timed};
      }
    }
  }

  Found found() const {
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md_.get());
    return {ov[0], ov[1]};
  }

  [[noreturn]] void fail(int rc, size_t at) const {
    std::string why = pcre2_message(rc);
    if (rc == PCRE2_ERROR_MATCHLIMIT) why += " (" + std::to_string(kMatchLimit) + " steps)";
    throw Error(re_.source_ + ": " + re_.what_ + " fails on the input at offset " +
                std::to_string(offset_ + at) + ": " + why);
  }

  const Regex& re_;
  std::string_view text_;
  size_t offset_;
  Budget& budget_;
  Clock clock_;
  std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> md_;
  std::unique_ptr<pcre2_match_context, decltype(&pcre2_match_context_free)> ctx_;
  std::unique_ptr<pcre2_jit_stack, decltype(&pcre2_jit_stack_free)> stack_;
};

void Regex::for_each_match(std::string_view text, size_t offset, Budget& budget,
                           const std::function<void(size_t, size_t)>& on_match) const {
  RegexSearch search(*this, text, offset, budget);
  size_t at = 0;
  while (at < text.size()) {
    const std::optional<RegexSearch::Found> m = search.next(at);
    if (!m) return;
    if (m->end > m->start) {
      on_match(m->start, m->end);
      at = m->end;
    } else {
      at = search.next_char(m->start);  // an empty match: step over one character
    }
  }
}

}  // namespace llama::bpe
