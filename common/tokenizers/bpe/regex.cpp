// Regex: PCRE2 compile (with JIT when available) and the match loop.
#define PCRE2_CODE_UNIT_WIDTH 8
#include "regex.hpp"

#include <pcre2.h>

#include <memory>

#include "llama/error.hpp"

namespace llama::bpe {
namespace {

std::string pcre2_message(int code) {
  PCRE2_UCHAR buf[256];
  pcre2_get_error_message(code, buf, sizeof buf);
  return reinterpret_cast<const char*>(buf);
}

// Bounds a hostile pattern's backtracking (per match attempt).
constexpr uint32_t kMatchLimit = 10'000'000;

}  // namespace

Regex::Regex(const std::string& pattern, const std::string& source, const std::string& what)
    : source_(source), what_(what) {
  int err = 0;
  PCRE2_SIZE err_offset = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                   PCRE2_UTF | PCRE2_UCP, &err, &err_offset, nullptr);
  if (code == nullptr) {
    throw Error(source + ": " + what + ": PCRE2 rejects the regex at offset " +
                std::to_string(err_offset) + ": " + pcre2_message(err));
  }
  code_ = code;
  jit_ = pcre2_jit_compile(code, PCRE2_JIT_COMPLETE) == 0;
}

Regex::~Regex() { pcre2_code_free(static_cast<pcre2_code*>(code_)); }

void Regex::for_each_match(std::string_view text, size_t offset,
                           const std::function<void(size_t, size_t)>& on_match) const {
  auto* code = static_cast<pcre2_code*>(code_);
  const std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> md(
      pcre2_match_data_create_from_pattern(code, nullptr), &pcre2_match_data_free);
  const std::unique_ptr<pcre2_match_context, decltype(&pcre2_match_context_free)> ctx(
      pcre2_match_context_create(nullptr), &pcre2_match_context_free);
  if (!md || !ctx) throw Error(source_ + ": " + what_ + ": out of memory for PCRE2");
  pcre2_set_match_limit(ctx.get(), kMatchLimit);
  // The JIT's own stack grows up to 8 MiB (the default 32 KiB fails on long matches).
  const std::unique_ptr<pcre2_jit_stack, decltype(&pcre2_jit_stack_free)> stack(
      jit_ ? pcre2_jit_stack_create(32 * 1024, 8 * 1024 * 1024, nullptr) : nullptr,
      &pcre2_jit_stack_free);
  if (stack) pcre2_jit_stack_assign(ctx.get(), nullptr, stack.get());

  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t at = 0;
  while (at < text.size()) {
    const int rc =
        pcre2_match(code, subject, text.size(), at, PCRE2_NO_UTF_CHECK, md.get(), ctx.get());
    if (rc == PCRE2_ERROR_NOMATCH) return;
    if (rc < 0) {
      throw Error(source_ + ": " + what_ + " fails on the input at offset " +
                  std::to_string(offset + at) + ": " + pcre2_message(rc));
    }
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md.get());
    const size_t start = ov[0], end = ov[1];
    if (end > start) {
      on_match(start, end);
      at = end;
    } else {
      // An empty match: step over one character.
      at = start + 1;
      while (at < text.size() && (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80) ++at;
    }
  }
}

}  // namespace llama::bpe
