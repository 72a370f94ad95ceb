// libFuzzer target: llama-server's request parsers (apps/llama-server/
// completion_request.hpp, tokenize_request.hpp) on any body, for both completions
// routes and /tokenize, /detokenize. Each either accepts the body, with every field
// inside the range it promises, or refuses it with a 400 ApiError; nothing else
// escapes, and refusals' JSON can always be written (a field name of invalid UTF-8
// must not make the error response itself throw). Several prompts, and logprobs
// with or without stream, are accepted within their bounds.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "api_error.hpp"
#include "completion_request.hpp"
#include "fuzz_check.hpp"
#include "openai_json.hpp"
#include "tokenize_request.hpp"

namespace {

using namespace llama::server;

void check_accepted(const CompletionRequest& r) {
  FUZZ_CHECK(!r.max_tokens || *r.max_tokens >= 1, "max_tokens >= 1");
  FUZZ_CHECK(!r.temperature || (*r.temperature >= 0 && *r.temperature <= 2), "temperature range");
  FUZZ_CHECK(!r.top_p || (*r.top_p >= 0 && *r.top_p <= 1), "top_p range");
  FUZZ_CHECK(r.logprobs >= -1 && r.logprobs <= kMaxChatTopLogprobs, "logprobs range");
  FUZZ_CHECK(r.stream || !r.include_usage, "include_usage only with stream");
  FUZZ_CHECK(r.stop.size() <= kMaxStopStrings, "stop count");
  for (const auto& s : r.stop) FUZZ_CHECK(!s.empty() && s.size() <= kMaxStopBytes, "stop size");
  if (r.endpoint == Endpoint::chat_completions) {
    FUZZ_CHECK(!r.messages.empty(), "chat has messages");
    FUZZ_CHECK(r.prompts.empty(), "chat has no prompts");
  } else {
    FUZZ_CHECK(!r.prompts.empty() && r.prompts.size() <= kMaxPrompts, "1..kMaxPrompts prompts");
    FUZZ_CHECK(r.logprobs <= kMaxCompletionLogprobs, "completions' logprobs range");
  }
  for (const Prompt& p : r.prompts) {
    FUZZ_CHECK(p.is_tokens ? !p.tokens.empty() : !p.text.empty(), "no empty prompt");
    for (const int64_t t : p.tokens) FUZZ_CHECK(t >= 0 && t <= INT32_MAX, "token id range");
  }
}

template <class Parse>
void refused_cleanly(Parse parse) {
  try {
    parse();
  } catch (const ApiError& e) {
    FUZZ_CHECK(e.status() == 400, "parsers refuse with 400");
    FUZZ_CHECK(!to_text(e.to_json()).empty(), "the error body can be written");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  for (const Endpoint e : {Endpoint::completions, Endpoint::chat_completions}) {
    refused_cleanly([&] { check_accepted(parse_completion_request(body, e)); });
  }
  refused_cleanly([&] { parse_tokenize_request(body); });
  refused_cleanly([&] { parse_detokenize_request(body); });
  return 0;
}
