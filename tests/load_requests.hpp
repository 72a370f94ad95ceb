// The requests of llama-server's load and fault tests: a set of templates (chat and
// completions, greedy and seeded), one HTTP exchange bounded in time whatever the
// server does, and the check that an answer is either exactly the template's
// expected text or a clean OpenAI-shaped error. No Catch assertions here: client
// threads call these and report failures as strings.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace llama::test::load {

struct Template {
  std::string name;
  bool chat = false;
  nlohmann::json body;  // without "stream"
};
const std::vector<Template>& templates();

struct Exchange {
  int status = 0;            // 0: no HTTP response
  std::string content_type;  // of the response
  std::string body;          // as received (all of it, or up to the first chunk)
  std::string transport;     // cpp-httplib's error when status is 0
  bool timed_out = false;    // past the deadline, cut by the client
  bool cut = false;          // closed by the client after the first chunk, as asked
  bool answered = false;     // a status line came
};

struct Call {
  std::string method = "POST";
  std::string path;
  std::string body;
  std::string api_key;  // sent as Authorization: Bearer when not empty
  std::chrono::seconds deadline{60};
  bool close_after_first_chunk = false;
};
inline Call get(std::string path, std::string api_key) {
  Call c;
  c.method = "GET";
  c.path = std::move(path);
  c.api_key = std::move(api_key);
  return c;
}
inline Call post(std::string path, std::string body, std::string api_key) {
  Call c;
  c.path = std::move(path);
  c.body = std::move(body);
  c.api_key = std::move(api_key);
  return c;
}
// One exchange on a new connection to 127.0.0.1:port; never takes much longer than
// `deadline` (connect, each read and the whole answer are bounded).
Exchange exchange(int port, const Call& call);

// The body of template `t` with stream set.
std::string request_body(const Template& t, bool stream);
// The generated text of a 200 answer (streamed or not); nullopt with `why` set when
// the body is not a well-formed answer.
std::optional<std::string> answer_text(const Exchange& e, bool chat, bool stream, std::string& why);
// Empty when `e` is a clean error (its status with {"error": {"message", "type",
// "code" = status}}), else what is wrong with it.
std::string clean_error_problem(const Exchange& e);

// A metric's value from Prometheus text (nullopt when absent).
std::optional<double> metric_value(const std::string& text, const std::string& name);

}  // namespace llama::test::load
