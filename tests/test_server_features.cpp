// llama-server in-process (tests/server_harness.hpp): logprobs in streams against the
// same request unstreamed, several prompts in one completions request against each
// sent alone, a non-streamed request whose client leaves, the bound on open
// connections, and the flags --help lists.
#include <catch2/catch.hpp>

#include <thread>

#include "server_harness.hpp"
#include "server_options.hpp"
#include "usage_error.hpp"

using namespace server_test;

namespace {

std::string post_request(const std::string& path, const json& body) {
  const std::string text = body.dump();
  return "POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" +
         "Content-Length: " + std::to_string(text.size()) + "\r\n\r\n" + text;
}

// Every logprobs list of a completions stream's chunks joined, as one legacy object;
// each chunk's tokens must spell that chunk's text when `per_chunk`.
json streamed_completion_logprobs(const std::string& body, bool per_chunk) {
  json all = {{"tokens", json::array()},
              {"token_logprobs", json::array()},
              {"top_logprobs", json::array()},
              {"text_offset", json::array()}};
  for (const json& e : sse_events(body)) {
    if (e["choices"].empty()) continue;
    const json& choice = e["choices"][0];
    const json& lp = choice["logprobs"];
    if (lp.is_null()) continue;
    std::string text;
    for (const auto& [key, list] : lp.items()) {
      for (const json& v : list) all[key].push_back(v);
    }
    for (const json& t : lp["tokens"]) text += t.get<std::string>();
    if (per_chunk) CHECK(text == choice["text"].get<std::string>());
  }
  return all;
}

json streamed_chat_logprobs(const std::string& body) {
  json all = json::array();
  for (const json& e : sse_events(body)) {
    if (e["choices"].empty()) continue;
    const json& lp = e["choices"][0]["logprobs"];
    if (lp.is_null()) continue;
    for (const json& v : lp["content"]) all.push_back(v);
  }
  return all;
}

std::string joined(const json& tokens) {
  std::string s;
  for (const json& t : tokens)
    s += t.is_string() ? t.get<std::string>() : t["token"].get<std::string>();
  return s;
}

}  // namespace

TEST_CASE("llama-server: streamed logprobs equal the unstreamed ones and spell the text") {
  TestServer s(options(2, 4));
  json body = {
      {"prompt", "Once upon a time"}, {"max_tokens", 24}, {"temperature", 0}, {"logprobs", 3}};
  const json whole = s.post("/v1/completions", body);
  const json& lp = whole["choices"][0]["logprobs"];
  const std::string text = whole["choices"][0]["text"];
  REQUIRE(lp["tokens"].size() == 24);
  CHECK(joined(lp["tokens"]) == text);
  CHECK(lp["top_logprobs"][0].size() == 3);
  CHECK(lp["text_offset"][0] == 0);
  CHECK(lp["text_offset"][1] == lp["tokens"][0].get<std::string>().size());
  body["stream"] = true;
  const std::string streamed = post_stream(s, "/v1/completions", body);
  CHECK(parse_stream(streamed, false).text == text);
  CHECK(streamed_completion_logprobs(streamed, true) == lp);

  SECTION("a stop string across tokens: the tokens before it, none after") {
    // A stop made of a token's last byte and the next token's first, found first there.
    const std::vector<std::string> pieces = lp["tokens"].get<std::vector<std::string>>();
    std::string stop;
    size_t cut = 0, kept = 0;
    size_t start = pieces[0].size();
    for (size_t k = 1; k + 1 < pieces.size() && stop.empty(); ++k) {
      const std::string& a = pieces[k];
      const std::string& b = pieces[k + 1];
      start += a.size();
      if (a.size() < 2 || b.empty()) continue;
      const std::string candidate = a.substr(a.size() - 1) + b.substr(0, 1);
      if (text.find(candidate) != start - 1) continue;
      stop = candidate;
      cut = start - 1;
      kept = k + 1;  // tokens 0..k: token k's text begins before the stop
    }
    REQUIRE_FALSE(stop.empty());
    body["stop"] = stop;
    body["stream"] = false;
    const json stopped = s.post("/v1/completions", body);
    CHECK(stopped["choices"][0]["text"] == text.substr(0, cut));
    CHECK(stopped["choices"][0]["finish_reason"] == "stop");
    const json& stopped_lp = stopped["choices"][0]["logprobs"];
    CHECK(stopped_lp["tokens"] ==
          json(std::vector<std::string>(pieces.begin(), pieces.begin() + kept)));
    body["stream"] = true;
    const std::string streamed_stop = post_stream(s, "/v1/completions", body);
    CHECK(parse_stream(streamed_stop, false).text == text.substr(0, cut));
    CHECK(streamed_completion_logprobs(streamed_stop, false) == stopped_lp);
  }

  SECTION("chat: logprobs.content per chunk") {
    json chat = {{"messages", {{{"role", "user"}, {"content", "Tell me a story."}}}},
                 {"max_tokens", 20},
                 {"temperature", 0},
                 {"logprobs", true},
                 {"top_logprobs", 2}};
    const json answer = s.post("/v1/chat/completions", chat);
    const json& content = answer["choices"][0]["logprobs"]["content"];
    REQUIRE(content.size() == 20);
    CHECK(content[0]["top_logprobs"].size() == 2);
    CHECK(joined(content) == answer["choices"][0]["message"]["content"].get<std::string>());
    chat["stream"] = true;
    const std::string chat_stream = post_stream(s, "/v1/chat/completions", chat);
    CHECK(streamed_chat_logprobs(chat_stream) == content);
    CHECK(parse_stream(chat_stream, true).text == answer["choices"][0]["message"]["content"]);
  }
}

TEST_CASE("llama-server: several prompts give one choice each, as each alone") {
  TestServer s(options(2, 4));
  const std::vector<int32_t> ids = encode("Lily and Ben");
  const json prompts = json::array({"Once upon a time", "The little dog ran", ids});
  json body = {{"max_tokens", 16}, {"temperature", 0.8}, {"seed", 5}, {"return_tokens", true}};
  std::vector<json> alone;
  int64_t prompt_tokens = 0, completion_tokens = 0;
  for (const json& p : prompts) {
    json one = body;
    one["prompt"] = p;
    alone.push_back(s.post("/v1/completions", one)["choices"][0]);
    prompt_tokens += s.post("/v1/completions", one)["usage"]["prompt_tokens"].get<int64_t>();
    completion_tokens += alone.back()["tokens"].size();
  }
  body["prompt"] = prompts;
  const json whole = s.post("/v1/completions", body);
  REQUIRE(whole["choices"].size() == 3);
  for (size_t i = 0; i < 3; ++i) {
    INFO("choice " << i);
    const json& c = whole["choices"][i];
    CHECK(c["index"] == i);
    CHECK(c["text"] == alone[i]["text"]);
    CHECK(c["tokens"] == alone[i]["tokens"]);
    CHECK(c["finish_reason"] == alone[i]["finish_reason"]);
  }
  CHECK(whole["usage"]["prompt_tokens"] == prompt_tokens);
  CHECK(whole["usage"]["completion_tokens"] == completion_tokens);
  CHECK(whole["usage"]["total_tokens"] == prompt_tokens + completion_tokens);

  body["stream"] = true;
  body["stream_options"] = {{"include_usage", true}};
  std::vector<std::string> texts(3);
  std::vector<int> finishes(3, 0);
  json usage;
  for (const json& e : sse_events(post_stream(s, "/v1/completions", body))) {
    if (e["choices"].empty()) {
      usage = e["usage"];
      continue;
    }
    const json& c = e["choices"][0];
    const size_t i = c["index"];
    REQUIRE(i < 3);
    texts[i] += c["text"].get<std::string>();
    if (!c["finish_reason"].is_null()) ++finishes[i];
  }
  for (size_t i = 0; i < 3; ++i) {
    CHECK(texts[i] == alone[i]["text"]);
    CHECK(finishes[i] == 1);
  }
  CHECK(usage["completion_tokens"] == completion_tokens);

  // Too many prompts, a bad one among them, and n: 400 naming the field.
  json many = json::array();
  for (int i = 0; i < 33; ++i) many.push_back("Once");
  check_error(s.post("/v1/completions", {{"prompt", many}}, 400), "invalid_request_error",
              "prompt: at most 32 prompts");
  check_error(s.post("/v1/completions", {{"prompt", {"Once", {1, 99999}}}}, 400),
              "invalid_request_error", "prompt[1]");
  check_error(s.post("/v1/completions", {{"prompt", {"Once", "Twice"}}, {"n", 2}}, 400),
              "invalid_request_error", "n: only 1");
  CHECK(s.server.engine()->stats().active == 0);
}

TEST_CASE("llama-server: a non-streamed request whose client leaves is cancelled") {
  TestServer s(options(1, 0));
  // The answer as an SDK sees it: 200, JSON, the completion object.
  httplib::Client c = s.client();
  const auto ok =
      c.Post("/v1/completions", R"({"prompt": "Once", "max_tokens": 3})", "application/json");
  REQUIRE(ok);
  CHECK(ok->status == 200);
  CHECK(ok->get_header_value("Content-Type") == "application/json");
  CHECK(json::parse(ok->body)["object"] == "text_completion");
  // An error found before generation keeps its status.
  const auto bad = c.Post("/v1/completions", R"({"prompt": [5, 99999]})", "application/json");
  REQUIRE(bad);
  CHECK(bad->status == 400);
  CHECK(bad->get_header_value("Content-Type") == "application/json");

  gate().close();
  RawSocket client(s.port);
  client.send(
      post_request("/v1/completions",
                   {{"prompt", "Once upon a time"}, {"max_tokens", 200}, {"ignore_eos", true}}));
  gate().wait_held();  // the request is in its first step
  CHECK(s.get("/slots")[0]["is_processing"] == true);
  client.close();
  // The writer notices the closed connection while it waits and cancels the request.
  while (s.server.engine()->stats().cancel_requests == 0)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  gate().open();
  json slots = s.get("/slots");
  for (int i = 0; i < 3000 && slots[0]["is_processing"] == true; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    slots = s.get("/slots");
  }
  CHECK(slots[0]["is_processing"] == false);
  const server::EngineStats st = s.server.engine()->stats();
  CHECK(st.cancelled == 1);
  CHECK(st.active == 0);
}

TEST_CASE("llama-server: a connection past --max-connections gets 503 at once") {
  server::ServerOptions o = options(1, 0);
  o.http_threads = 1;
  o.max_connections = 2;
  TestServer s(o);
  // Two connections that send a request line and never end their headers: one holds
  // the only thread (reading the rest, up to --timeout), one waits for it.
  std::optional<RawSocket> held(s.port), waiting(s.port);
  held->send("GET /health HTTP/1.1\r\n");
  waiting->send("GET /health HTTP/1.1\r\n");
  const std::string reply =
      raw_exchange(s.port, "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  INFO(reply);
  CHECK(reply.rfind("HTTP/1.1 503", 0) == 0);
  CHECK_THAT(reply, Contains("--max-connections"));
  CHECK_THAT(reply, Contains("server_busy"));
  held.reset();
  waiting.reset();
  // Once they are gone, connections are served again.
  std::optional<httplib::Result> res;
  for (int i = 0; i < 3000; ++i) {
    httplib::Client c = s.client();
    res.emplace(c.Get("/health"));
    if (*res && (*res)->status == 200) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  REQUIRE(*res);
  CHECK((*res)->status == 200);
}

TEST_CASE("llama-server: --help lists the server's flags and none of llama-cli's generation") {
  const server::ServerOptions o = server::parse_server_options({"--help"});
  REQUIRE(o.action == server::Action::help);
  const std::string& help = o.help_text;
  INFO(help);
  for (const char* flag : {"-c [ --checkpoint ]",
                           "-k [ --tokenizer ]",
                           "-b [ --backend ]",
                           "-j [ --threads ]",
                           "-t [ --temperature ]",
                           "--top-p",
                           "-r [ --seed ]",
                           "--numerics",
                           "--kv-cache",
                           "--plugin",
                           "--list-backends",
                           "--chat-template",
                           "--host",
                           "--port",
                           "--parallel",
                           "--ctx-size",
                           "--api-key",
                           "--queue",
                           "--max-body",
                           "--timeout",
                           "--drain-timeout",
                           "--log-prompts",
                           "--http-threads",
                           "--max-connections",
                           "--version",
                           "-h [ --help ]"}) {
    CHECK_THAT(help, Contains(flag));
  }
  CHECK_THAT(help, !Contains("--prompt"));
  CHECK_THAT(help, !Contains("--steps"));
  CHECK_THROWS_AS(server::parse_server_options({"-c", "m.bin", "-p", "Once"}), cli::UsageError);
  CHECK_THROWS_AS(server::parse_server_options({"-c", "m.bin", "-s", "9"}), cli::UsageError);
  CHECK_THROWS_AS(server::parse_server_options(
                      {"-c", "m.bin", "--http-threads", "4", "--max-connections", "3"}),
                  cli::UsageError);
  const server::ServerOptions d =
      server::parse_server_options({"-c", "m.bin", "--parallel", "2", "--queue", "6"});
  CHECK(d.http_threads == 12);
  CHECK(d.max_connections == 24);
  CHECK(d.checkpoint == "m.bin");
}
