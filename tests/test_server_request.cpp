// llama-server's request parsers (apps/llama-server/completion_request.hpp,
// tokenize_request.hpp): the fields honoured, their types and ranges, and every
// refusal naming its field with status 400.
#include <catch2/catch.hpp>

#include <string>

#include "api_error.hpp"
#include "completion_request.hpp"
#include "tokenize_request.hpp"

using namespace llama::server;
using Catch::Matchers::Contains;

namespace {

// The ApiError `body` gets, as "status param: message".
std::string refusal(const std::string& body, Endpoint e = Endpoint::completions) {
  try {
    parse_completion_request(body, e);
  } catch (const ApiError& err) {
    return std::to_string(err.status()) + " " + err.param() + ": " + err.what();
  }
  return "accepted";
}

}  // namespace

TEST_CASE("server request: a completions body with every honoured field") {
  const CompletionRequest r = parse_completion_request(
      R"({"model": "m", "prompt": "Once", "max_tokens": 12, "temperature": 0.5, "top_p": 0.8,
          "seed": 42, "stop": ["a", "bc"], "stream": true, "stream_options": {"include_usage": true},
          "n": 1, "ignore_eos": true, "user": "u", "frequency_penalty": 0, "presence_penalty": 0.0,
          "logit_bias": {}, "echo": false, "best_of": 1, "return_tokens": true, "suffix": null})",
      Endpoint::completions);
  CHECK(r.model == "m");
  REQUIRE(r.prompts.size() == 1);
  CHECK(r.prompts[0].text == "Once");
  CHECK_FALSE(r.prompts[0].is_tokens);
  CHECK(r.max_tokens == 12);
  CHECK(r.temperature == 0.5f);
  CHECK(r.top_p == 0.8f);
  CHECK(r.seed == 42u);
  CHECK(r.stop == std::vector<std::string>{"a", "bc"});
  CHECK(r.stream);
  CHECK(r.include_usage);
  CHECK(r.ignore_eos);
  CHECK(r.return_tokens);
  CHECK(r.logprobs == -1);
}

TEST_CASE("server request: prompts as text, token ids, or a list of them") {
  const auto prompts = [](const std::string& body) {
    return parse_completion_request(body, Endpoint::completions).prompts;
  };
  CHECK(prompts(R"({"prompt": [1, 2, 3]})")[0].tokens == std::vector<int64_t>{1, 2, 3});
  CHECK(prompts(R"({"prompt": [[5, 6]]})")[0].tokens == std::vector<int64_t>{5, 6});
  CHECK(prompts(R"({"prompt": ["x"]})")[0].text == "x");
  const std::vector<Prompt> several = prompts(R"({"prompt": ["x", [7], "y"]})");
  REQUIRE(several.size() == 3);
  CHECK(several[0].text == "x");
  CHECK(several[1].is_tokens);
  CHECK(several[1].tokens == std::vector<int64_t>{7});
  CHECK(several[2].text == "y");
  CHECK(prompts(R"({"prompt": [[1], [2, 3]]})").size() == 2);
  std::string many = R"({"prompt": [)";
  for (size_t i = 0; i <= kMaxPrompts; ++i) many += i ? ", \"a\"" : "\"a\"";
  many += "]}";
  CHECK_THAT(refusal(many), Contains("400 prompt: prompt: at most 32 prompts"));
  CHECK_THAT(refusal(R"({"prompt": ["x", ""]})"),
             Contains("400 prompt[1]: prompt[1]: must not be empty"));
  CHECK_THAT(refusal(R"({"prompt": ["x", 3]})"), Contains("400 prompt[1]"));
  CHECK_THAT(refusal(R"({"prompt": [[1], [2, -3]]})"), Contains("400 prompt[1][1]"));
  CHECK_THAT(refusal(R"({"prompt": [[1], []]})"), Contains("400 prompt[1]"));
  CHECK_THAT(refusal(R"({"prompt": [1, -2]})"), Contains("400 prompt[1]"));
  CHECK_THAT(refusal(R"({"prompt": [1, 1.5]})"), Contains("must be an integer"));
  CHECK_THAT(refusal(R"({"prompt": [99999999999]})"), Contains("400 prompt[0]"));
  CHECK_THAT(refusal(R"({"prompt": ""})"), Contains("400 prompt: prompt: must not be empty"));
  CHECK_THAT(refusal(R"({"prompt": []})"), Contains("400 prompt"));
  CHECK_THAT(refusal(R"({"prompt": 7})"), Contains("400 prompt"));
  CHECK_THAT(refusal(R"({"max_tokens": 3})"), Contains("400 prompt: prompt: required"));
  CHECK_THAT(refusal(R"({"prompt": ["x", "y"], "n": 2})"), Contains("400 n: n: only 1"));
}

TEST_CASE("server request: chat messages and chat's logprobs fields") {
  const CompletionRequest r = parse_completion_request(
      R"({"messages": [{"role": "system", "content": "Be brief."},
                       {"role": "user", "content": [{"type": "text", "text": "Hi "},
                                                    {"type": "text", "text": "there"}]}],
          "max_completion_tokens": 5, "logprobs": true, "top_logprobs": 3})",
      Endpoint::chat_completions);
  REQUIRE(r.messages.size() == 2);
  CHECK(r.messages[0].role == "system");
  CHECK(r.messages[1].content == "Hi there");
  CHECK(r.max_tokens == 5);
  CHECK(r.logprobs == 3);
  const auto chat = [](const std::string& body) {
    return refusal(body, Endpoint::chat_completions);
  };
  CHECK_THAT(chat(R"({"messages": []})"), Contains("400 messages"));
  CHECK_THAT(chat(R"({"messages": [{"role": "tool", "content": "x"}]})"),
             Contains("400 messages[0].role"));
  CHECK_THAT(chat(R"({"messages": [{"role": "user"}]})"),
             Contains("messages[0].content: required"));
  CHECK_THAT(chat(R"({"messages": [{"role": "user", "content": "x", "tool_calls": []}]})"),
             Contains("400 messages[0].tool_calls"));
  CHECK_THAT(chat(R"({"messages": [{"role": "user", "content": [{"type": "image_url"}]}]})"),
             Contains("messages[0].content[0].type"));
  CHECK_THAT(chat(R"({"messages": [{"role": "user", "content": "x"}], "top_logprobs": 2})"),
             Contains("400 top_logprobs"));
  CHECK_THAT(chat(R"({"messages": [{"role": "user", "content": "x"}], "top_logprobs": 21,
                      "logprobs": true})"),
             Contains("400 top_logprobs"));
  CHECK_THAT(chat(R"({"prompt": "x"})"), Contains("400 prompt: prompt: unknown field"));
}

TEST_CASE("server request: refusals name the field") {
  CHECK_THAT(refusal("{not json"), Contains("400 : the request body is not valid JSON"));
  CHECK_THAT(refusal("[1]"), Contains("must be a JSON object"));
  CHECK_THAT(refusal(R"({"prompt": "x", "temperature": "hot"})"),
             Contains("400 temperature: temperature: must be a number, got a string"));
  CHECK_THAT(refusal(R"({"prompt": "x", "temperature": 2.5})"), Contains("400 temperature"));
  CHECK_THAT(refusal(R"({"prompt": "x", "top_p": -0.1})"), Contains("400 top_p"));
  CHECK_THAT(refusal(R"({"prompt": "x", "max_tokens": 0})"), Contains("400 max_tokens"));
  CHECK_THAT(refusal(R"({"prompt": "x", "max_tokens": 1e30})"), Contains("400 max_tokens"));
  CHECK_THAT(refusal(R"({"prompt": "x", "max_tokens": 18446744073709551615})"),
             Contains("400 max_tokens"));
  CHECK_THAT(refusal(R"({"prompt": "x", "seed": -1})"), Contains("400 seed"));
  CHECK_THAT(refusal(R"({"prompt": "x", "n": 2})"), Contains("400 n: n: only 1 is supported"));
  CHECK_THAT(refusal(R"({"prompt": "x", "stop": ""})"), Contains("400 stop"));
  CHECK_THAT(refusal(R"({"prompt": "x", "stop": ["a", 3]})"), Contains("400 stop[1]"));
  CHECK_THAT(refusal(R"({"prompt": "x", "stop": 3})"), Contains("400 stop"));
  CHECK_THAT(refusal(R"({"prompt": "x", "tools": []})"),
             Contains("400 tools: tools: is not supported"));
  CHECK_THAT(refusal(R"({"prompt": "x", "response_format": {"type": "json_object"}})"),
             Contains("400 response_format"));
  CHECK_THAT(refusal(R"({"prompt": "x", "frequency_penalty": 0.5})"),
             Contains("400 frequency_penalty"));
  CHECK_THAT(refusal(R"({"prompt": "x", "logit_bias": {"1": 5}})"), Contains("400 logit_bias"));
  CHECK_THAT(refusal(R"({"prompt": "x", "echo": true})"), Contains("400 echo"));
  CHECK_THAT(refusal(R"({"prompt": "x", "logprobs": 6})"), Contains("400 logprobs"));
  CHECK(parse_completion_request(R"({"prompt": "x", "logprobs": 2, "stream": true})",
                                 Endpoint::completions)
            .logprobs == 2);
  CHECK_THAT(refusal(R"({"prompt": "x", "stream_options": {"include_usage": true}})"),
             Contains("400 stream_options"));
  CHECK_THAT(refusal(R"({"prompt": "x", "stream": true, "stream_options": {"x": 1}})"),
             Contains("400 stream_options.x"));
  CHECK_THAT(refusal(R"({"prompt": "x", "bogus": 1})"),
             Contains("400 bogus: bogus: unknown field"));
  CHECK_THAT(refusal(R"({"prompt": "x", "max_completion_tokens": 3})"),
             Contains("400 max_completion_tokens"));
}

TEST_CASE("server request: /tokenize and /detokenize bodies") {
  const TokenizeRequest t =
      parse_tokenize_request(R"({"content": "hi", "add_special": true, "with_pieces": true})");
  CHECK(t.content == "hi");
  CHECK(t.add_special);
  CHECK(t.with_pieces);
  CHECK(parse_detokenize_request(R"({"tokens": [1, 2]})").tokens == std::vector<int64_t>{1, 2});
  CHECK_THROWS_WITH(parse_tokenize_request(R"({"content": 3})"),
                    Contains("content: must be a string"));
  CHECK_THROWS_WITH(parse_tokenize_request(R"({})"), Contains("content: required"));
  CHECK_THROWS_WITH(parse_detokenize_request(R"({"tokens": [-1]})"), Contains("tokens[0]"));
  CHECK_THROWS_WITH(parse_detokenize_request(R"({"tokens": 1})"),
                    Contains("tokens: must be a list"));
}
