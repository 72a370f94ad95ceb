// llama-load (bench/llama-load): its SSE parser (events split anywhere, CRLF, [DONE],
// error events), stream chunks, nearest-rank percentiles, flags and report; and end to
// end against our llama-server run as a process on stories1M. No speed is asserted.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <httplib.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

#include "load_options.hpp"
#include "load_report.hpp"
#include "prompt_text.hpp"
#include "sse_parser.hpp"
#include "stats.hpp"
#include "stream_chunk.hpp"
#include "stream_request.hpp"
#include "test_support.hpp"
#include "usage_error.hpp"

extern char** environ;

using namespace llama::load;
using Catch::Matchers::Contains;
using nlohmann::json;

namespace {

std::vector<std::string> feed_split(const std::string& stream, std::vector<size_t> cuts) {
  SseParser p;
  std::vector<std::string> events;
  size_t at = 0;
  cuts.push_back(stream.size());
  for (const size_t cut : cuts) {
    for (std::string& e : p.feed(std::string_view(stream).substr(at, cut - at)))
      events.push_back(std::move(e));
    at = cut;
  }
  CHECK_FALSE(p.pending());
  return events;
}

}  // namespace

TEST_CASE("llama-load: SSE events split anywhere give the same data", "[load]") {
  const std::vector<std::string> want = {R"({"choices":[{"text":"Once"}]})", "two\nlines",
                                         "[DONE]"};
  for (const std::string eol : {"\n", "\r\n", "\r"}) {
    const std::string stream = ": keep-alive" + eol + eol + "data: " + want[0] + eol + eol +
                               "event: x" + eol + "data:two" + eol + "data: lines" + eol + "id: 3" +
                               eol + eol + "data: [DONE]" + eol + eol;
    INFO("line end " << (eol == "\n" ? "LF" : eol == "\r\n" ? "CRLF" : "CR"));
    CHECK(feed_split(stream, {}) == want);
    for (size_t cut = 0; cut <= stream.size(); ++cut) {
      INFO("split at " << cut);
      REQUIRE(feed_split(stream, {cut}) == want);
    }
    std::vector<size_t> every_byte;
    for (size_t i = 1; i < stream.size(); ++i) every_byte.push_back(i);
    CHECK(feed_split(stream, every_byte) == want);
  }
  SseParser p;
  CHECK(p.feed("data: half").empty());
  CHECK(p.pending());
  // An event past the bound stops the parse rather than growing without end.
  SseParser big;
  const std::string line(1 << 20, 'x');
  for (size_t i = 0; i < SseParser::kMaxEventBytes / line.size() + 1; ++i) {
    CHECK(big.feed("data: " + line + "\n").empty());
  }
  CHECK(big.overflowed());
  CHECK(big.feed("\n\ndata: [DONE]\n\n").empty());
}

TEST_CASE("llama-load: stream chunks of completions and chat", "[load]") {
  const StreamChunk done = parse_stream_chunk("[DONE]", Endpoint::completions);
  CHECK(done.done);
  CHECK_FALSE(done.has_content);

  CHECK(parse_stream_chunk(R"({"choices":[{"text":" a","index":0}]})", Endpoint::completions)
            .has_content);
  CHECK_FALSE(parse_stream_chunk(R"({"choices":[{"text":"","finish_reason":"length"}]})",
                                 Endpoint::completions)
                  .has_content);
  // chat: the role-only first chunk is no token; delta.content is
  CHECK_FALSE(parse_stream_chunk(R"({"choices":[{"delta":{"role":"assistant","content":""}}]})",
                                 Endpoint::chat)
                  .has_content);
  CHECK(parse_stream_chunk(R"({"choices":[{"delta":{"content":"Hi"}}]})", Endpoint::chat)
            .has_content);
  CHECK_FALSE(parse_stream_chunk(R"({"choices":[{"text":"Hi"}]})", Endpoint::chat).has_content);

  const StreamChunk usage = parse_stream_chunk(
      R"({"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":16}})", Endpoint::chat);
  REQUIRE(usage.completion_tokens);
  CHECK(*usage.completion_tokens == 16);
  CHECK_FALSE(usage.error);

  const StreamChunk err = parse_stream_chunk(
      R"({"error":{"message":"backend failed","type":"server_error","code":500}})",
      Endpoint::completions);
  REQUIRE(err.error);
  CHECK(*err.error == "backend failed");
  CHECK(*parse_stream_chunk(R"({"error":"plain text"})", Endpoint::chat).error == "plain text");
  REQUIRE(parse_stream_chunk("{not json", Endpoint::chat).error);
  CHECK_THAT(*parse_stream_chunk("{not json", Endpoint::chat).error, Contains("not a JSON object"));

  CHECK(error_message(R"({"error":{"message":"Invalid API key","type":"authentication_error"}})") ==
        "Invalid API key");
  CHECK(error_message("Not\nFound") == "Not Found");
  CHECK(error_message(std::string(1000, 'x')).size() == 203);
}

TEST_CASE("llama-load: nearest-rank percentiles", "[load]") {
  const std::vector<double> v = {50, 15, 40, 20, 35};  // unsorted on purpose
  CHECK(*percentile(v, 5) == 15);
  CHECK(*percentile(v, 30) == 20);
  CHECK(*percentile(v, 40) == 20);
  CHECK(*percentile(v, 50) == 35);
  CHECK(*percentile(v, 100) == 50);
  CHECK(*percentile(v, 0) == 15);
  std::vector<double> ten;
  for (int i = 1; i <= 10; ++i) ten.push_back(i);
  const Percentiles p = percentiles(ten);
  CHECK(*p.p50 == 5);
  CHECK(*p.p90 == 9);
  CHECK(*p.p99 == 10);
  CHECK(*percentiles({7}).p99 == 7);
  CHECK_FALSE(percentile({}, 50));
  CHECK_FALSE(percentiles({}).p50);
  CHECK(*mean(ten) == 5.5);
  CHECK_FALSE(mean({}));
}

TEST_CASE("llama-load: flags, prompt and report", "[load]") {
  const LoadOptions o = parse_load_options(
      {"--url", "http://localhost:9000/", "--concurrency", "1,4,16", "--prompt-tokens", "5"});
  CHECK(o.host == "localhost");
  CHECK(o.port == 9000);
  CHECK(o.concurrency == std::vector<int>{1, 4, 16});
  CHECK(o.requests == 16);
  CHECK(o.prompt == "Once upon a time there");
  CHECK(prompt_of_tokens(40) == prompt_of_tokens(40));
  // Distinct prompts: 4 words of their own, then the same text.
  CHECK(prompt_of_tokens(6, 0) == "Red Red Red Red there was");
  CHECK(prompt_of_tokens(6, 1) == "Blue Red Red Red there was");
  CHECK(prompt_of_tokens(6, 0x1234) == "Pink Yellow Green Blue there was");
  CHECK(prompt_of_tokens(6, 0x10000) == prompt_of_tokens(6, 0));
  CHECK(parse_load_options({"--prompt-tokens", "4", "--distinct-prompts"}).distinct_prompts);
  CHECK(parse_load_options({}).prompt == prompt_of_tokens(128));

  const auto bad = [](std::vector<std::string> args, const std::string& flag) {
    INFO(flag);
    CHECK_THROWS_WITH(parse_load_options(args), Contains(flag));
  };
  bad({"--url", "https://127.0.0.1:8080"}, "--url: https is not supported");
  bad({"--url", "127.0.0.1:8080"}, "--url");
  bad({"--url", "http://127.0.0.1:99999"}, "--url");
  bad({"--url", "http://127.0.0.1:8080/v1"}, "--url");
  bad({"--concurrency", "2,,3"}, "--concurrency");
  bad({"--concurrency", "0"}, "--concurrency");
  bad({"--endpoint", "embeddings"}, "--endpoint");
  bad({"--requests", "0"}, "--requests");
  bad({"--requests", "3", "--duration", "1"}, "--duration");
  bad({"--prompt", "x", "--prompt-tokens", "3"}, "--prompt-tokens");
  bad({"--max-tokens", "0"}, "--max-tokens");
  bad({"--temperature", "-1"}, "--temperature");
  bad({"--format", "csv"}, "--format");
  bad({"--timeout", "0"}, "--timeout");
  bad({"--api-key", ""}, "--api-key");
  bad({"--prompt", "x", "--distinct-prompts"}, "--distinct-prompts");
  bad({"--prompt-tokens", "3", "--distinct-prompts"}, "--distinct-prompts");

  LevelRun run;
  run.concurrency = 2;
  run.wall_s = 2;
  RequestRecord ok;
  ok.ok = true;
  ok.status = 200;
  ok.ttft_s = 0.5;
  ok.gaps_s = {0.1, 0.3};
  ok.tokens = 3;
  ok.tokens_from_usage = true;
  ok.chunks = 3;
  RequestRecord denied;
  denied.status = 401;
  denied.error = "Invalid API key";
  RequestRecord refused;
  refused.error = "no answer: Connection";
  run.records = {ok, denied, ok, denied, refused};
  const LevelSummary s = summarize(run);
  CHECK(s.ok == 2);
  CHECK(s.failed == 3);
  CHECK(s.generated_tokens == 6);
  CHECK(s.aggregate_tokens_per_s == 3);
  CHECK(*s.decode_tokens_per_s_mean == Approx(5));  // 2 tokens after the first in 0.4 s
  CHECK(*s.ttft_ms.p99 == 500);
  CHECK(*s.itl_ms.p50 == Approx(100));
  CHECK(*s.itl_ms.p90 == Approx(300));
  REQUIRE(s.errors.size() == 2);
  CHECK(s.errors[0] == std::pair<std::string, int64_t>{"HTTP 401: Invalid API key", 2});
  CHECK(s.errors[1] == std::pair<std::string, int64_t>{"no answer: Connection", 1});
  const json j = json::parse(report_json(o, {s}).dump());
  CHECK(j["percentiles"] == "nearest-rank");
  CHECK(j["levels"][0]["ttft_ms"]["p50"] == 500);
  CHECK(j["levels"][0]["errors"][0]["count"] == 2);
  const std::string text = report_text(o, {s});
  CHECK_THAT(text, Contains("TTFT ms p50/p90/p99") && Contains("2 x HTTP 401: Invalid API key"));
}

namespace {

// Our llama-server as a process on stories1M, on a free port read from its first line
// of output; stopped (SIGTERM, then SIGKILL after 30 s) at the end of the scope.
class ServerProcess {
 public:
  explicit ServerProcess(std::vector<std::string> args) {
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, fds[0]);
    posix_spawn_file_actions_addclose(&actions, fds[1]);
    args.insert(args.begin(), LLAMA_SERVER_PATH);
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const int rc = posix_spawn(&pid_, LLAMA_SERVER_PATH, &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(fds[1]);
    if (rc != 0) {
      ::close(fds[0]);
      pid_ = -1;
      FAIL("cannot start " LLAMA_SERVER_PATH);
    }
    try {
      read_port(fds[0]);
    } catch (...) {
      stop();  // the destructor does not run for a constructor that throws
      throw;
    }
  }
  ~ServerProcess() { stop(); }
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  // Ends the server; its exit status (SIGTERM finishes the requests in flight and exits 0).
  int stop() {
    if (pid_ <= 0) return status_;
    ::kill(pid_, SIGTERM);
    for (int i = 0; i < 300; ++i) {
      if (::waitpid(pid_, &status_, WNOHANG) == pid_) {
        pid_ = -1;
        return status_;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, &status_, 0);
    pid_ = -1;
    return status_;
  }

  int port = 0;

 private:
  void read_port(int fd) {
    // The first line: "llama-server: listening on http://127.0.0.1:PORT".
    std::string line;
    char c;
    while (::read(fd, &c, 1) == 1 && c != '\n') line.push_back(c);
    ::close(fd);  // the server's later stdout writes (none) would get EPIPE
    const size_t colon = line.rfind(':');
    INFO("llama-server's first line: " << line);
    REQUIRE((line.find("listening on http://") != std::string::npos && colon != std::string::npos));
    port = std::stoi(line.substr(colon + 1));
  }

  pid_t pid_ = -1;
  int status_ = -1;
};

llama::test::ProcessResult run_load(std::vector<std::string> args) {
  return llama::test::run_program(LLAMA_LOAD_PATH, args);
}

// A failed run: exit `code`, stderr one line "llama-load: ..." naming `needle`.
void check_one_line_error(const llama::test::ProcessResult& r, int code,
                          const std::string& needle) {
  INFO("stderr: " << r.err);
  CHECK(r.exit_code == code);
  CHECK_THAT(r.err, Catch::Matchers::StartsWith("llama-load: ") && Contains(needle));
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
}

// Ordered percentiles, each above 0 or, for inter-token
// gaps, at least 0: events that reach the client in one read share its
// arrival time, so on a loaded host most gaps can be 0.
void check_percentiles(const json& p, bool may_be_zero = false) {
  INFO(p.dump());
  for (const char* k : {"p50", "p90", "p99"}) {
    const double v = p[k].get<double>();
    REQUIRE((may_be_zero ? v >= 0 : v > 0));
  }
  CHECK(p["p50"].get<double>() <= p["p90"].get<double>());
  CHECK(p["p90"].get<double>() <= p["p99"].get<double>());
}

}  // namespace

TEST_CASE("llama-load: against llama-server, every request counted", "[load]") {
  using llama::test::model_path;
  // Paced (10 ms per backend call): stories1M alone makes a 16-token stream in
  // about a millisecond, which a loaded client can read all at once, leaving
  // no gap to measure the decode rate from.
  ServerProcess server({"-c",
                        model_path("stories1M.bin"),
                        "-k",
                        model_path("tok2048.bin"),
                        "--plugin",
                        LLAMA_PACED_PLUGIN_PATH,
                        "-b",
                        "test-paced:graph",
                        "-j",
                        "2",
                        "--parallel",
                        "3",
                        "--port",
                        "0",
                        "--api-key",
                        "secret",
                        "--drain-timeout",
                        "0",
                        "--chat-template",
                        llama::test::llama2_chat_template_file("load-chat.jinja")});
  const std::string url = "http://127.0.0.1:" + std::to_string(server.port);

  for (const std::string endpoint : {"completions", "chat"}) {
    INFO(endpoint);
    const auto r =
        run_load({"--url",           url,   "--api-key",  "secret", "--endpoint",   endpoint,
                  "--concurrency",   "1,3", "--requests", "6",      "--max-tokens", "16",
                  "--prompt-tokens", "12",  "--seed",     "5",      "--model",      "stories",
                  "--format",        "json"});
    INFO("stderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    const json j = json::parse(r.out);
    CHECK(j["settings"]["endpoint"] == endpoint);
    CHECK(j["settings"]["max_tokens"] == 16);
    REQUIRE(j["levels"].size() == 2);
    for (size_t i = 0; i < 2; ++i) {
      const json& level = j["levels"][i];
      INFO(level.dump());
      CHECK(level["concurrency"] == (i == 0 ? 1 : 3));
      CHECK(level["requests_ok"] == 6);
      CHECK(level["requests_failed"] == 0);
      CHECK(level["generated_tokens"] == 6 * 16);
      CHECK(level["requests_without_usage"] == 0);
      CHECK(level["content_chunks"].get<int64_t>() >= 6);
      CHECK(level["wall_s"].get<double>() > 0);
      CHECK(level["aggregate_tokens_per_s"].get<double>() > 0);
      CHECK(level["decode_tokens_per_s_mean"].get<double>() > 0);
      check_percentiles(level["ttft_ms"]);
      check_percentiles(level["itl_ms"], /*may_be_zero=*/true);
      check_percentiles(level["request_latency_s"]);
      CHECK(level["errors"].empty());
    }
  }

  // The text table.
  const auto text = run_load({"--url", url, "--api-key", "secret", "--requests", "2",
                              "--max-tokens", "4", "--warmup", "0", "--distinct-prompts"});
  INFO("stderr: " << text.err);
  CHECK(text.exit_code == 0);
  CHECK_THAT(text.out, Contains("TTFT ms p50/p90/p99") && Contains("ITL ms p50/p90/p99"));

  // A server answering errors: each request counted, the message shown, exit code 1.
  const auto denied = run_load({"--url", url, "--concurrency", "2", "--requests", "3",
                                "--max-tokens", "4", "--warmup", "0", "--format", "json"});
  CHECK(denied.exit_code == 1);
  const json d = json::parse(denied.out);
  CHECK(d["levels"][0]["requests_ok"] == 0);
  CHECK(d["levels"][0]["requests_failed"] == 3);
  REQUIRE(d["levels"][0]["errors"].size() == 1);
  CHECK(d["levels"][0]["errors"][0]["count"] == 3);
  CHECK_THAT(d["levels"][0]["errors"][0]["message"].get<std::string>(), Contains("HTTP 401"));
  // ... and a failed warm-up is one line.
  check_one_line_error(run_load({"--url", url, "--requests", "1"}), 1,
                       "warm-up request failed: HTTP 401");

  CHECK(server.stop() == 0);
  // Nothing listens there now: one line naming the URL.
  check_one_line_error(run_load({"--url", url, "--requests", "1"}), 1, url);
  check_one_line_error(run_load({"--url", "https://127.0.0.1:1"}), 2,
                       "--url: https is not supported");
}

TEST_CASE("llama-load: streams that end badly are counted as failures", "[load]") {
  // An in-process server answering each prompt its own way, over chunked encoding with
  // CRLF events split mid-line.
  httplib::Server server;
  server.Post("/v1/completions", [](const httplib::Request& req, httplib::Response& res) {
    const std::string prompt = json::parse(req.body)["prompt"];
    if (prompt == "busy") {
      res.status = 503;
      res.set_content(R"({"error":{"message":"the queue is full","type":"server_error"}})",
                      "application/json");
      return;
    }
    std::vector<std::string> parts = {"data: {\"choices\":[{\"te", "xt\":\"a\"}]}\r", "\n\r\n",
                                      "data: {\"choices\":[{\"text\":\"b\"}]}\r\n\r\n"};
    if (prompt == "fails") parts.push_back("data: {\"error\":{\"message\":\"boom\"}}\r\n\r\n");
    if (prompt == "no usage") parts.push_back("data: [DONE]\r\n\r\n");
    res.set_chunked_content_provider("text/event-stream", [parts](size_t, httplib::DataSink& sink) {
      for (const std::string& p : parts) sink.write(p.data(), p.size());
      sink.done();
      return true;
    });
  });
  // Bound and listening once this returns: connections wait in the backlog.
  const int port = server.bind_to_any_port("127.0.0.1");
  REQUIRE(port > 0);
  std::thread thread([&] { server.listen_after_bind(); });
  struct Stop {
    httplib::Server& s;
    std::thread& t;
    ~Stop() {
      // stop() only ends a loop that has started: wait for it (it serves every request
      // above, so this is a wait only when a check failed before the first).
      while (!s.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      s.stop();
      t.join();
    }
  } stop{server, thread};

  LoadOptions o = parse_load_options({"--url", "http://127.0.0.1:" + std::to_string(port)});
  const auto send = [&](const std::string& prompt) {
    return stream_request(o, request_body(o, prompt));
  };
  const RequestRecord no_usage = send("no usage");
  INFO(no_usage.error);
  CHECK(no_usage.ok);
  CHECK(no_usage.chunks == 2);
  CHECK(no_usage.tokens == 2);
  CHECK_FALSE(no_usage.tokens_from_usage);
  CHECK(no_usage.ttft_s.value() > 0);
  CHECK(no_usage.gaps_s.size() == 1);

  const RequestRecord fails = send("fails");
  CHECK_FALSE(fails.ok);
  CHECK(fails.error == "error event in the stream: boom");
  const RequestRecord cut = send("cut short");
  CHECK_FALSE(cut.ok);
  CHECK(cut.error == "the stream ended without data: [DONE]");
  const RequestRecord busy = send("busy");
  CHECK_FALSE(busy.ok);
  CHECK(busy.status == 503);
  CHECK(busy.error == "the queue is full");

  LevelRun run;
  run.records = {no_usage, fails, busy};
  const LevelSummary s = summarize(run);
  CHECK(s.requests_without_usage == 1);
  REQUIRE(s.errors.size() == 2);
  CHECK(s.errors[0].first == "error event in the stream: boom");
  CHECK(s.errors[1].first == "HTTP 503: the queue is full");
}
