// The load and fault tests' server (load_server.hpp).
#include "load_server.hpp"

#include <catch2/catch.hpp>

#include <thread>

#include "load_requests.hpp"
#include "test_support.hpp"

namespace llama::test::load {
namespace {

// A cancelled request frees its sequence within a second or two; this is far beyond.
constexpr auto kIdleWait = std::chrono::seconds(30);

}  // namespace

std::vector<std::string> server_args(const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"-c",
                                   model_path("stories1M.bin"),
                                   "-k",
                                   model_path("tok2048.bin"),
                                   "--chat-template",
                                   llama2_chat_template_file("load-chat.jinja"),
                                   "-b",
                                   "graph",
                                   "--parallel",
                                   "4",
                                   "-j",
                                   "1",
                                   "--port",
                                   "0"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

void wait_idle(const ServerProcess& server, const std::string& api_key) {
  const auto deadline = std::chrono::steady_clock::now() + kIdleWait;
  std::string state;
  for (;;) {
    const Exchange s = exchange(server.port(), get("/slots", api_key));
    const Exchange m = exchange(server.port(), get("/metrics", api_key));
    REQUIRE(s.status == 200);
    REQUIRE(m.status == 200);
    state.clear();
    for (const nlohmann::json& q : nlohmann::json::parse(s.body)) {
      if (q.at("is_processing").get<bool>()) state += "sequence " + q["id"].dump() + " busy; ";
    }
    for (const char* gauge :
         {"llama_backends_requests_processing", "llama_backends_requests_deferred"}) {
      const std::optional<double> v = metric_value(m.body, gauge);
      INFO(m.body);
      REQUIRE(v);
      if (*v != 0) state += std::string(gauge) + " " + std::to_string(*v) + "; ";
    }
    if (state.empty()) return;
    if (std::chrono::steady_clock::now() > deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  FAIL("not idle " << kIdleWait.count() << " s after the load: " << state);
}

}  // namespace llama::test::load
