// llama-server in-process (apps/llama-server/server.hpp) on stories1M with the graph
// backend, talked to over HTTP with cpp-httplib's client: the routes, each answer's
// tokens against llama::BatchGenerator running the same request alone on a fresh
// backend (batch invariance: exact ids), streaming, concurrency, stop strings, the
// error statuses and shapes, a full queue, and a client that disconnects mid-stream.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include "server_harness.hpp"
#include "token_rate.hpp"

using namespace llama;
using Catch::Matchers::Contains;
using nlohmann::json;

using namespace server_test;

TEST_CASE("llama-server: health while loading, then the small routes") {
  TestServer s(options(2, 4), /*load=*/false);
  httplib::Client c = s.client();
  auto res = c.Get("/health");
  REQUIRE(res);
  CHECK(res->status == 503);
  CHECK(json::parse(res->body) == json{{"status", "loading"}});
  res = c.Get("/v1/models");
  REQUIRE(res);
  CHECK(res->status == 503);
  s.server.load();
  res = c.Get("/health");
  REQUIRE(res);
  CHECK(res->status == 200);
  CHECK(json::parse(res->body) == json{{"status", "ok"}});

  res = c.Get("/v1/models");
  REQUIRE(res);
  REQUIRE(res->status == 200);
  const json models = json::parse(res->body);
  CHECK(models["object"] == "list");
  CHECK(models["data"][0]["id"] == "stories1M.bin");

  const json t = s.post("/tokenize", {{"content", "Once upon a time"}, {"add_special", true}});
  const std::vector<int32_t> ids = t["tokens"].get<std::vector<int32_t>>();
  CHECK(ids == encode("Once upon a time"));
  const json d = s.post("/detokenize", {{"tokens", ids}});
  CHECK_THAT(d["content"].get<std::string>(), Contains("Once upon a time"));
  const json p = s.post("/tokenize", {{"content", "Once"}, {"with_pieces", true}});
  REQUIRE(p["tokens"].size() >= 1);
  CHECK(p["tokens"][0].contains("piece"));
  check_error(s.post("/detokenize", {{"tokens", {5000}}}, 400), "invalid_request_error",
              "tokens[0]: token id 5000 is outside the vocabulary of 2048");
}

TEST_CASE("llama-server: completions equal BatchGenerator alone, streamed or not") {
  TestServer s(options(2, 4));
  for (const Case& c : kCases) {
    INFO(c.prompt);
    const Completion want = solo(encode(c.prompt), c.temperature, c.top_p, c.seed, c.max_tokens);
    const json got = s.post("/v1/completions", completion_body(c));
    CHECK(got["object"] == "text_completion");
    CHECK(got["model"] == "stories");
    const json& choice = got["choices"][0];
    CHECK(choice["tokens"].get<std::vector<int32_t>>() == want.tokens);
    CHECK(choice["text"] == want.text);
    CHECK(choice["finish_reason"] ==
          (want.stop_reason == StopReason::max_tokens ? "length" : "stop"));
    CHECK(got["usage"]["prompt_tokens"] == encode(c.prompt).size());
    CHECK(got["usage"]["completion_tokens"] == want.tokens.size());
    CHECK(got["usage"]["total_tokens"] == encode(c.prompt).size() + want.tokens.size());
    CHECK(got["usage"]["prompt_tokens_details"].contains("cached_tokens"));

    json body = completion_body(c);
    body.erase("return_tokens");
    body["stream"] = true;
    body["stream_options"] = {{"include_usage", true}};
    const Streamed st = parse_stream(post_stream(s, "/v1/completions", body), false);
    CHECK(st.text == want.text);
    CHECK(st.finish_reason == choice["finish_reason"]);
    CHECK(st.usage["completion_tokens"] == want.tokens.size());
  }
  // Token ids as the prompt give the same as the text they encode.
  const Completion want = solo(encode("Lily and Ben"), 0.0f, 0.9f, 1, 20);
  const json got = s.post("/v1/completions", {{"prompt", encode("Lily and Ben")},
                                              {"max_tokens", 20},
                                              {"temperature", 0},
                                              {"return_tokens", true}});
  CHECK(got["choices"][0]["tokens"].get<std::vector<int32_t>>() == want.tokens);
  // Without stream_options no usage chunk comes.
  const Streamed plain = parse_stream(
      post_stream(s, "/v1/completions", {{"prompt", "Lily"}, {"max_tokens", 3}, {"stream", true}}),
      false);
  CHECK(plain.usage.is_null());
}

TEST_CASE("llama-server: concurrent streams each give their solo text; /metrics counts them") {
  TestServer s(options(2, 8));
  std::vector<Completion> want;
  std::vector<std::string> got(kCases.size());
  for (const Case& c : kCases)
    want.push_back(solo(encode(c.prompt), c.temperature, c.top_p, c.seed, c.max_tokens));
  std::vector<std::thread> clients;
  for (size_t i = 0; i < kCases.size(); ++i) {
    clients.emplace_back([&, i] {
      json body = completion_body(kCases[i]);
      body.erase("return_tokens");
      body["stream"] = true;
      got[i] = try_stream(s.port, "/v1/completions", body).value_or("");
    });
  }
  for (std::thread& t : clients) t.join();
  for (size_t i = 0; i < kCases.size(); ++i) {
    INFO(kCases[i].prompt);
    REQUIRE_FALSE(got[i].empty());
    CHECK(parse_stream(got[i], false).text == want[i].text);
  }

  // /metrics: Prometheus text, a "name value" line per metric after its HELP and TYPE.
  httplib::Client c = s.client();
  const auto res = c.Get("/metrics");
  REQUIRE(res);
  REQUIRE(res->status == 200);
  std::map<std::string, double> metrics;
  std::istringstream lines(res->body);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("# HELP llama_backends_", 0) == 0 ||
        line.rfind("# TYPE llama_backends_", 0) == 0)
      continue;
    INFO(line);
    REQUIRE(line.rfind("llama_backends_", 0) == 0);
    const size_t space = line.find(' ');
    REQUIRE(space != std::string::npos);
    metrics[line.substr(0, space)] = std::stod(line.substr(space + 1));
  }
  size_t prompt = 0, generated = 0;
  for (size_t i = 0; i < kCases.size(); ++i) {
    prompt += encode(kCases[i].prompt).size();
    generated += want[i].tokens.size();
  }
  CHECK(metrics.at("llama_backends_requests_finished_total") == kCases.size());
  CHECK(metrics.at("llama_backends_prompt_tokens_total") == prompt);
  CHECK(metrics.at("llama_backends_tokens_predicted_total") == generated);
  // The live counter has caught up with the finished requests' tokens; the 10 s
  // window holds at most all of them (how many is timing, not asserted).
  CHECK(metrics.at("llama_backends_tokens_generated_total") == generated);
  CHECK(metrics.at("llama_backends_tokens_per_second") >= 0);
  CHECK(metrics.at("llama_backends_tokens_per_second") * 10 <= generated);
  CHECK(metrics.at("llama_backends_requests_processing") == 0);
  CHECK(metrics.at("llama_backends_sequences_busy") == 0);
  CHECK(metrics.at("llama_backends_draining") == 0);
  CHECK(metrics.at("llama_backends_sequences") == 2);
  const json slots = s.get("/slots");
  REQUIRE(slots.size() == 2);
  int64_t cached = 0;
  for (const json& slot : slots) cached += slot["tokens_cached"].get<int64_t>();
  CHECK(metrics.at("llama_backends_kv_cache_tokens") == cached);
}

TEST_CASE("llama-server: stop strings across tokens, max_tokens, chat") {
  TestServer s(options(2, 4));
  // A stop string made of the end of one token's text and the start of the next.
  const std::vector<int32_t> prompt = encode("Once upon a time");
  const Completion full = solo(prompt, 0.0f, 0.9f, 1, 40);
  static const auto tok = open_tokenizer(test::model_path("tok2048.bin"), {.vocab_size = 2048});
  std::string stop;
  size_t stop_at = 0;  // where the text starts in the full completion
  {
    std::string text;
    int32_t prev = prompt.back();
    for (size_t i = 0; i + 1 < full.tokens.size() && stop.empty(); ++i) {
      const std::string a = tok->decode_token(prev, full.tokens[i]);
      const std::string b = tok->decode_token(full.tokens[i], full.tokens[i + 1]);
      text += a;
      if (i >= 3 && a.size() >= 2 && b.size() >= 2) {
        stop = a.substr(a.size() - 2) + b.substr(0, 2);
        stop_at = text.size() - 2;
      }
      prev = full.tokens[i];
    }
  }
  REQUIRE_FALSE(stop.empty());
  const std::string before = full.text.substr(0, full.text.find(stop));
  REQUIRE(before.size() <= stop_at);
  json body{{"prompt", "Once upon a time"}, {"max_tokens", 40}, {"temperature", 0}, {"stop", stop}};
  const json got = s.post("/v1/completions", body);
  CHECK(got["choices"][0]["text"] == before);
  CHECK(got["choices"][0]["finish_reason"] == "stop");
  body["stream"] = true;
  const std::string raw = post_stream(s, "/v1/completions", body);
  const Streamed st = parse_stream(raw, false);
  CHECK(st.text == before);
  CHECK(st.finish_reason == "stop");
  CHECK(raw.find(stop) == std::string::npos);

  const json capped =
      s.post("/v1/completions", {{"prompt", "Once"}, {"max_tokens", 5}, {"ignore_eos", true}});
  CHECK(capped["choices"][0]["finish_reason"] == "length");
  CHECK(capped["usage"]["completion_tokens"] == 5);

  // Chat: the template renders the messages; the reply equals the rendered prompt's
  // completion, streamed or not.
  const json messages = json::array({{{"role", "user"}, {"content", "Tell me a story."}}});
  const json chat = s.post("/v1/chat/completions",
                           {{"messages", messages}, {"max_tokens", 24}, {"temperature", 0}});
  CHECK(chat["object"] == "chat.completion");
  CHECK(chat["choices"][0]["message"]["role"] == "assistant");
  const std::string reply = chat["choices"][0]["message"]["content"];
  const int64_t prompt_tokens = chat["usage"]["prompt_tokens"];
  const std::vector<int32_t> rendered = encode("[INST] Tell me a story. [/INST]");
  CHECK(prompt_tokens == static_cast<int64_t>(rendered.size()));
  CHECK(reply == solo(rendered, 0.0f, 0.9f, 1, 24).text);
  const std::string raw_chat = post_stream(
      s, "/v1/chat/completions",
      {{"messages", messages}, {"max_tokens", 24}, {"temperature", 0}, {"stream", true}});
  const std::vector<json> events = sse_events(raw_chat);
  REQUIRE_FALSE(events.empty());
  CHECK(events[0]["object"] == "chat.completion.chunk");
  CHECK(events[0]["choices"][0]["delta"]["role"] == "assistant");
  CHECK(parse_stream(raw_chat, true).text == reply);

  // Logprobs (non-streamed): one entry per token, joining to the content.
  const json lp = s.post("/v1/chat/completions", {{"messages", messages},
                                                  {"max_tokens", 8},
                                                  {"temperature", 0},
                                                  {"logprobs", true},
                                                  {"top_logprobs", 2}});
  std::string joined;
  for (const json& t : lp["choices"][0]["logprobs"]["content"]) {
    joined += t["token"].get<std::string>();
    CHECK(t["top_logprobs"].size() == 2);
  }
  CHECK(joined == lp["choices"][0]["message"]["content"]);
}

TEST_CASE("llama-server: errors in OpenAI's shape") {
  server::ServerOptions o = options(1, 2);
  o.max_body = 4096;
  o.api_keys = {"sekret", "other-key"};
  TestServer s(std::move(o));
  httplib::Client c = s.client();
  const httplib::Headers auth{{"Authorization", "Bearer sekret"}};

  auto res = c.Post("/v1/completions", R"({"prompt": "x"})", "application/json");
  REQUIRE(res);
  CHECK(res->status == 401);
  check_error(json::parse(res->body), "authentication_error", "API key");
  res = c.Post("/v1/completions", httplib::Headers{{"Authorization", "Bearer sekreT"}},
               R"({"prompt": "x"})", "application/json");
  REQUIRE(res);
  CHECK(res->status == 401);
  res = c.Get("/health");  // public
  REQUIRE(res);
  CHECK(res->status == 200);
  res = c.Get("/v1/models");
  REQUIRE(res);
  CHECK(res->status == 200);
  res = c.Post("/v1/completions", httplib::Headers{{"Authorization", "Bearer other-key"}},
               R"({"prompt": "Once", "max_tokens": 2})", "application/json");
  REQUIRE(res);
  CHECK(res->status == 200);

  const auto post = [&](const std::string& path, const std::string& body, int status) {
    auto r = c.Post(path.c_str(), auth, body, "application/json");
    REQUIRE(r);
    INFO(r->body);
    CHECK(r->status == status);
    return json::parse(r->body);
  };
  check_error(post("/v1/completions", "{oops", 400), "invalid_request_error", "not valid JSON");
  check_error(post("/v1/completions", R"({"prompt": "x", "temperature": "hot"})", 400),
              "invalid_request_error", "temperature: must be a number");
  check_error(post("/v1/completions", R"({"prompt": "x", "n": 3})", 400), "invalid_request_error",
              "n: only 1");
  check_error(post("/v1/chat/completions",
                   R"({"messages": [{"role": "user", "content": "x"}], "tools": []})", 400),
              "invalid_request_error", "tools: is not supported");
  check_error(post("/v1/completions", R"({"prompt": [1, 2048]})", 400), "invalid_request_error",
              "prompt[1]: token id 2048 is outside the vocabulary of 2048");
  const json too_long{{"prompt", std::vector<int>(300, 5)}};
  check_error(post("/v1/completions", too_long.dump(), 400), "invalid_request_error",
              "the prompt is 300 tokens, longer than the context of 256 positions");
  check_error(post("/v1/nothing", "{}", 404), "not_found_error", "no route POST /v1/nothing");
  check_error(post("/v1/completions", std::string(5000, ' '), 413), "request_too_large",
              "--max-body (4096 bytes)");
  {
    // A chunked body is refused before any of it is read (cpp-httplib bounds only
    // bodies that come with a Content-Length): only the headers are sent.
    const std::string reply =
        raw_exchange(s.port,
                     "POST /v1/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer sekret\r\n"
                     "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
                     "Connection: close\r\n\r\n");
    CHECK(reply.rfind("HTTP/1.1 411", 0) == 0);
    check_error(json::parse(reply.substr(reply.find("\r\n\r\n") + 4)), "invalid_request_error",
                "Content-Length");
  }
  res = c.Get("/nowhere", auth);
  REQUIRE(res);
  CHECK(res->status == 404);
  // The server still serves.
  CHECK(post("/v1/completions", R"({"prompt": "Once", "max_tokens": 2})", 200)["choices"].size() ==
        1);
}

TEST_CASE("llama-server: a full queue gets 503; a client that leaves frees its sequence") {
  TestServer s(options(1, 0));
  gate().close();
  // A chat stream writes its role chunk before any token: the client reads it,
  // then leaves while the request is held inside its first step.
  std::thread leaver([&] {
    httplib::Client c = s.client();
    httplib::Request req;
    req.method = "POST";
    req.path = "/v1/chat/completions";
    req.body = json{
        {"messages", {{{"role", "user"}, {"content", "Go on."}}}},
        {"stream", true},
        {"ignore_eos",
         true}}.dump();
    req.set_header("Content-Type", "application/json");
    req.content_receiver = [](const char*, size_t, uint64_t, uint64_t) { return false; };
    c.send(req);
  });
  gate().wait_held();
  const json held = s.get("/slots");
  REQUIRE(held.size() == 1);
  CHECK(held[0]["is_processing"] == true);
  CHECK(held[0]["n_ctx"] == 256);
  // The one sequence is taken and the queue holds none: 503, in OpenAI's shape.
  const json busy = s.post("/v1/completions", {{"prompt", "Once"}, {"max_tokens", 2}}, 503);
  check_error(busy, "server_busy", "--parallel and --queue");
  leaver.join();
  // The server notices the closed connection when a write fails and cancels the
  // request, which ends once the step held at the gate returns.
  while (s.server.engine()->stats().cancel_requests == 0)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  gate().open();
  while (s.server.engine()->stats().cancelled == 0)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  const Completion want = solo(encode("Once"), 0.0f, 0.9f, 1, 8);
  const json after =
      s.post("/v1/completions",
             {{"prompt", "Once"}, {"max_tokens", 8}, {"temperature", 0}, {"return_tokens", true}});
  CHECK(after["choices"][0]["tokens"].get<std::vector<int32_t>>() == want.tokens);
  const server::EngineStats st = s.server.engine()->stats();
  CHECK(st.cancelled == 1);
  CHECK(st.active == 0);
  CHECK(s.get("/health") == json{{"status", "ok"}});
  // The sequence is idle once the engine has stepped past the request's end.
  json idle = s.get("/slots");
  for (int i = 0; i < 3000 && idle[0]["is_processing"] == true; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    idle = s.get("/slots");
  }
  CHECK(idle[0]["is_processing"] == false);
  CHECK(idle[0]["tokens_cached"] > 0);  // kept for a prompt that shares its prefix
}

TEST_CASE("llama-server: TokenRate counts the tokens of the last window only") {
  using namespace std::chrono_literals;
  server::TokenRate rate(10s);
  const auto t0 = server::TokenRate::Clock::time_point{} + 100s;
  CHECK(rate.per_second(t0) == 0);
  rate.add(5, t0);
  rate.add(0, t0 + 1s);  // nothing generated: no entry
  rate.add(3, t0 + 5s);
  rate.add(2, t0 + 5s);  // the same step
  CHECK(rate.per_second(t0 + 6s) == Approx(1.0));
  CHECK(rate.per_second(t0 + 12s) == Approx(0.5));  // the first 5 left the window
  CHECK(rate.per_second(t0 + 16s) == 0);
  rate.add(4, t0 + 20s);
  CHECK(rate.per_second(t0 + 20s) == Approx(0.4));
}

TEST_CASE("llama-server: /health says draining while shutdown lets a request finish") {
  server::ServerOptions o = options(1, 0);
  o.drain_timeout = 60;
  TestServer s(o);
  gate().close();
  std::optional<std::string> stream;
  std::thread client([&] {
    json body = {{"prompt", "Once"}, {"max_tokens", 4}, {"temperature", 0}, {"stream", true}};
    stream = try_stream(s.port, "/v1/completions", body);
  });
  gate().wait_held();
  std::thread stopper([&] { s.server.stop(); });
  while (!s.server.engine()->stats().draining)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  httplib::Client c = s.client();
  const auto health = c.Get("/health");
  REQUIRE(health);
  CHECK(health->status == 503);
  CHECK(json::parse(health->body) == json{{"status", "draining"}});
  const auto metrics = c.Get("/metrics");
  REQUIRE(metrics);
  CHECK_THAT(metrics->body, Contains("\nllama_backends_draining 1\n"));
  CHECK_THAT(metrics->body, Contains("\nllama_backends_sequences_busy 1\n"));
  // A new request is refused while the one in flight runs on to its end.
  const json refused = s.post("/v1/completions", {{"prompt", "Once"}, {"max_tokens", 2}}, 503);
  CHECK_THAT(refused["error"]["message"].get<std::string>(), Contains("shutting down"));
  gate().open();
  client.join();
  stopper.join();
  REQUIRE(stream.has_value());
  const auto parsed = parse_stream(*stream, false);
  CHECK(parsed.finish_reason == "length");
  CHECK(parsed.text == solo(encode("Once"), 0.0f, 0.9f, 1, 4).text);
}

TEST_CASE("llama-server: a second server on a port in use is refused") {
  TestServer s(options(1, 0));
  server::ServerOptions o = options(1, 0);
  o.port = s.port;
  server::Server second(o, [](const std::string&) {});
  CHECK_THROWS_WITH(second.listen(),
                    Contains("cannot listen on 127.0.0.1:" + std::to_string(s.port)));
  CHECK(s.get("/health") == json{{"status", "ok"}});
}
