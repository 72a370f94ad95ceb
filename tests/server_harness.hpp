// The harness of llama-server's in-process tests (test_server*.cpp): a wrapper
// backend whose steps a test can hold at a gate, a server per test on a free port
// (stopped at the end of its scope), the solo BatchGenerator answer a request must
// equal, and readers of SSE bodies and raw sockets.
#pragma once

#include <catch2/catch.hpp>
#include <httplib.h>

#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "llama/batch_generator.hpp"
#include "llama/formats/llama2c_checkpoint.hpp"
#include "llama/registry.hpp"
#include "raw_socket.hpp"
#include "server.hpp"
#include "test_support.hpp"

namespace server_test {

using namespace llama;
using Catch::Matchers::Contains;
using nlohmann::json;

// A wrapper whose forward_runs waits while the gate is closed: a test holds a request
// inside its first step to see what the server does meanwhile (a full queue, a
// client leaving), without depending on how fast anything runs.
class Gate {
 public:
  void close() {
    std::lock_guard lock(mutex_);
    open_ = false;
  }
  void open() {
    {
      std::lock_guard lock(mutex_);
      open_ = true;
    }
    changed_.notify_all();
  }
  void pass() {
    std::unique_lock lock(mutex_);
    ++waiting_;
    changed_.notify_all();
    changed_.wait(lock, [&] { return open_; });
    --waiting_;
  }
  // Waits until a step is held at the gate.
  void wait_held() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return waiting_ > 0; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  bool open_ = true;
  int waiting_ = 0;
};

inline Gate& gate() {
  static Gate g;
  return g;
}

class GatedBackend final : public InferenceBackend {
 public:
  explicit GatedBackend(std::unique_ptr<InferenceBackend> inner) : inner_(std::move(inner)) {}
  std::string name() const override { return "test-gate:" + inner_->name(); }
  DTypeSet supported_dtypes() const override { return inner_->supported_dtypes(); }
  void prepare(const Model& m) override { inner_->prepare(m); }
  std::span<const float> forward(int32_t token, int64_t pos) override {
    gate().pass();
    return inner_->forward(token, pos);
  }
  std::span<const float> forward_batch(std::span<const int32_t> tokens, int64_t start,
                                       bool all) override {
    gate().pass();
    return inner_->forward_batch(tokens, start, all);
  }
  int32_t sequences() const override { return inner_->sequences(); }
  std::span<const float> forward_runs(std::span<const SequenceRun> runs) override {
    gate().pass();
    return inner_->forward_runs(runs);
  }
  bool batch_invariant() const override { return inner_->batch_invariant(); }

 private:
  std::unique_ptr<InferenceBackend> inner_;
};

inline const WrapperRegistrar kGate{
    "test-gate", "holds steps while a test's gate is closed",
    [](std::unique_ptr<InferenceBackend> inner, const BackendOptions&) {
      return std::make_unique<GatedBackend>(std::move(inner));
    }};

inline server::ServerOptions options(int32_t parallel, int64_t queue) {
  server::ServerOptions o;
  o.checkpoint = test::model_path("stories1M.bin");
  o.tokenizer = test::model_path("tok2048.bin");
  o.chat_template = test::llama2_chat_template_file("server-chat.jinja");
  o.backend = "test-gate:graph";
  o.threads = 2;
  o.parallel = parallel;
  o.queue = queue;
  o.port = 0;
  o.timeout = 30;
  o.drain_timeout = 0;
  return o;
}

// A server on 127.0.0.1:<free port>, loaded, stopped at the end of the scope.
struct TestServer {
  explicit TestServer(server::ServerOptions o, bool load = true)
      : server(std::move(o), [this](const std::string& line) {
          std::lock_guard lock(log_mutex);
          log.push_back(line);
        }) {
    port = server.listen();
    if (load) server.load();
  }
  ~TestServer() {
    gate().open();
    server.stop();
  }
  httplib::Client client() const {
    httplib::Client c("127.0.0.1", port);
    c.set_read_timeout(60);
    return c;
  }
  json get(const std::string& path) const {
    httplib::Client c = client();
    const auto res = c.Get(path.c_str());
    REQUIRE(res);
    INFO(res->body);
    REQUIRE(res->status == 200);
    return json::parse(res->body);
  }
  json post(const std::string& path, const json& body, int expected_status = 200) const {
    httplib::Client c = client();
    const auto res = c.Post(path.c_str(), body.dump(), "application/json");
    REQUIRE(res);
    INFO(res->body);
    REQUIRE(res->status == expected_status);
    return json::parse(res->body);
  }

  std::mutex log_mutex;
  std::vector<std::string> log;
  server::Server server;
  int port = 0;
};

// A request's answer from BatchGenerator alone on a fresh graph backend of one sequence.
inline Completion solo(const std::vector<int32_t>& prompt, float temperature, float top_p,
                       uint64_t seed, int64_t max_tokens, std::vector<std::string> stop = {}) {
  static const Checkpoint ck = Checkpoint::open(test::model_path("stories1M.bin"));
  static const auto tok = open_tokenizer(test::model_path("tok2048.bin"), {.vocab_size = 2048});
  BackendOptions bo;
  bo.threads = 2;
  auto backend = BackendRegistry::instance().create("graph", bo);
  backend->prepare(ck.model());
  BatchGenerator generator(*backend, ck.config(), *tok, {.sequences = 1});
  GenerationRequest r;
  r.prompt = prompt;
  r.sampling = {temperature, top_p, seed};
  r.max_tokens = max_tokens;
  r.stop = std::move(stop);
  Completion out;
  r.on_finish = [&](const Completion& c) { out = c; };
  generator.add(std::move(r));
  generator.run();
  return out;
}

inline std::vector<int32_t> encode(const std::string& text) {
  static const auto tok = open_tokenizer(test::model_path("tok2048.bin"), {.vocab_size = 2048});
  return tok->encode(text, {.add_special = true});
}

// The JSON of each "data:" event of an SSE body, up to "[DONE]" (required).
inline std::vector<json> sse_events(const std::string& body) {
  std::vector<json> events;
  bool done = false;
  size_t at = 0;
  while (at < body.size()) {
    size_t end = body.find("\n\n", at);
    REQUIRE(end != std::string::npos);
    const std::string event = body.substr(at, end - at);
    at = end + 2;
    if (event.rfind(":", 0) == 0) continue;  // an SSE comment (keep-alive)
    REQUIRE(event.rfind("data: ", 0) == 0);
    REQUIRE_FALSE(done);
    if (event == "data: [DONE]") {
      done = true;
    } else {
      events.push_back(json::parse(event.substr(6)));
    }
  }
  REQUIRE(done);
  return events;
}

// A streamed request's raw body; nullopt when the request failed or was not a
// 200 event stream. No Catch assertions: client threads call it.
inline std::optional<std::string> try_stream(int port, const std::string& path, const json& body) {
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(60);
  httplib::Request req;
  req.method = "POST";
  req.path = path;
  req.body = body.dump();
  req.set_header("Content-Type", "application/json");
  std::string out;
  req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
    out.append(data, n);
    return true;
  };
  const auto res = c.send(req);
  if (!res || res->status != 200 || res->get_header_value("Content-Type") != "text/event-stream")
    return std::nullopt;
  return out;
}

inline std::string post_stream(const TestServer& s, const std::string& path, const json& body) {
  const std::optional<std::string> out = try_stream(s.port, path, body);
  REQUIRE(out);
  return *out;
}

// The text of a completions (or chat) stream, its finish_reason and usage chunk.
struct Streamed {
  std::string text;
  std::string finish_reason;
  json usage;
};
inline Streamed parse_stream(const std::string& body, bool chat) {
  Streamed s;
  for (const json& e : sse_events(body)) {
    if (e["choices"].empty()) {
      s.usage = e["usage"];
      continue;
    }
    const json& choice = e["choices"][0];
    if (chat) {
      if (choice["delta"].contains("content"))
        s.text += choice["delta"]["content"].get<std::string>();
    } else {
      s.text += choice["text"].get<std::string>();
    }
    if (!choice["finish_reason"].is_null()) s.finish_reason = choice["finish_reason"];
  }
  return s;
}

using llama::test::RawSocket;

// Sends `request` as it is on a new connection and returns all the server answers
// until it closes the connection.
inline std::string raw_exchange(int port, const std::string& request) {
  RawSocket socket(port);
  socket.send(request);
  return socket.receive_all();
}

struct Case {
  std::string prompt;
  float temperature;
  float top_p;
  uint64_t seed;
  int64_t max_tokens;
};
inline const std::vector<Case> kCases = {
    {"Once upon a time", 0.0f, 0.9f, 1, 40},
    {"The little dog ran to the park", 0.8f, 0.9f, 42, 48},
    {"Lily and Ben", 1.0f, 0.0f, 7, 32},
    {"One day, a big bird", 0.5f, 0.95f, 1234, 56},
};

inline json completion_body(const Case& c) {
  return {{"prompt", c.prompt}, {"temperature", c.temperature}, {"top_p", c.top_p},
          {"seed", c.seed},     {"max_tokens", c.max_tokens},   {"return_tokens", true},
          {"model", "stories"}};
}

inline void check_error(const json& body, const std::string& type, const std::string& message) {
  INFO(body.dump());
  REQUIRE(body.contains("error"));
  CHECK(body["error"]["type"] == type);
  CHECK_THAT(body["error"]["message"].get<std::string>(), Contains(message));
  CHECK(body["error"].contains("code"));
}

}  // namespace server_test
