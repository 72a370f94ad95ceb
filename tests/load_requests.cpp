// Requests and answer checks of the load and fault tests (load_requests.hpp).
#include "load_requests.hpp"

#include <httplib.h>

#include <sstream>

namespace llama::test::load {

using nlohmann::json;

const std::vector<Template>& templates() {
  static const std::vector<Template> t = {
      {"completion-greedy",
       false,
       {{"prompt", "Once upon a time"}, {"max_tokens", 40}, {"temperature", 0}}},
      {"completion-seeded",
       false,
       {{"prompt", "The little dog ran to the park"},
        {"max_tokens", 48},
        {"temperature", 0.8},
        {"top_p", 0.9},
        {"seed", 42}}},
      {"completion-seeded-stop",
       false,
       {{"prompt", "One day, a big bird"},
        {"max_tokens", 56},
        {"temperature", 0.5},
        {"top_p", 0.95},
        {"seed", 1234},
        {"stop", {"tree", "\n"}}}},
      {"completion-tokens-long",
       false,
       {{"prompt", json::array({1, 403, 411, 1000, 263, 931})},
        {"max_tokens", 160},
        {"temperature", 1.0},
        {"seed", 7},
        {"ignore_eos", true}}},
      {"chat-greedy",
       true,
       {{"messages", {{{"role", "user"}, {"content", "Tell me a story."}}}},
        {"max_tokens", 40},
        {"temperature", 0}}},
      {"chat-seeded-system",
       true,
       {{"messages",
         {{{"role", "system"}, {"content", "You tell short stories."}},
          {{"role", "user"}, {"content", "Once upon a time there was a cat"}}}},
        {"max_tokens", 48},
        {"temperature", 0.7},
        {"seed", 99}}},
      {"chat-seeded-turns",
       true,
       {{"messages",
         {{{"role", "user"}, {"content", "Lily had a ball."}},
          {{"role", "assistant"}, {"content", "She played with it in the park."}},
          {{"role", "user"}, {"content", "What happened next?"}}}},
        {"max_completion_tokens", 32},
        {"temperature", 0.9},
        {"top_p", 0.8},
        {"seed", 5}}},
  };
  return t;
}

std::string request_body(const Template& t, bool stream) {
  json body = t.body;
  body["stream"] = stream;
  return body.dump();
}

Exchange exchange(int port, const Call& call) {
  Exchange out;
  httplib::Client client("127.0.0.1", port);
  const auto secs = static_cast<time_t>(call.deadline.count());
  client.set_connection_timeout(10);
  client.set_write_timeout(secs);
  client.set_read_timeout(secs);  // per read: the whole answer is bounded below
  const auto deadline = std::chrono::steady_clock::now() + call.deadline;
  httplib::Request req;
  req.method = call.method;
  req.path = call.path;
  req.body = call.body;
  if (!call.body.empty()) req.set_header("Content-Type", "application/json");
  if (!call.api_key.empty()) req.set_header("Authorization", "Bearer " + call.api_key);
  // The status and headers as they come, so a stream cut on purpose still has them.
  req.response_handler = [&](const httplib::Response& r) {
    out.answered = true;
    out.status = r.status;
    out.content_type = r.get_header_value("Content-Type");
    return true;
  };
  req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
    out.body.append(data, n);
    if (call.close_after_first_chunk) {
      out.cut = true;
      return false;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      out.timed_out = true;
      return false;
    }
    return true;
  };
  const httplib::Result res = client.send(req);
  if (!res && !out.cut && !out.timed_out) {
    // Whatever came, the exchange did not end as HTTP says: say how far it got.
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - (deadline - call.deadline));
    out.transport = httplib::to_string(res.error()) + " error after " + std::to_string(ms.count()) +
                    " ms, " +
                    (out.status != 0 ? "status " + std::to_string(out.status) + " and "
                                     : std::string("no status line, ")) +
                    std::to_string(out.body.size()) + " body bytes received";
    out.status = 0;
  }
  if (std::chrono::steady_clock::now() > deadline) out.timed_out = true;
  return out;
}

namespace {

// The JSON of each "data:" event of an SSE body up to "[DONE]" (nullopt if malformed).
std::optional<std::vector<json>> sse_events(const std::string& body, std::string& why) {
  std::vector<json> events;
  size_t at = 0;
  while (at < body.size()) {
    const size_t end = body.find("\n\n", at);
    if (end == std::string::npos) {
      why = "an event without its blank line";
      return std::nullopt;
    }
    const std::string event = body.substr(at, end - at);
    at = end + 2;
    if (event.rfind(":", 0) == 0) continue;  // keep-alive comment
    if (event.rfind("data: ", 0) != 0) {
      why = "an event that is not data: " + event;
      return std::nullopt;
    }
    if (event == "data: [DONE]") {
      if (at != body.size()) {
        why = "events after [DONE]";
        return std::nullopt;
      }
      return events;
    }
    json j = json::parse(event.substr(6), nullptr, false);
    if (j.is_discarded() || j.contains("error")) {
      why = "a bad or error event: " + event;
      return std::nullopt;
    }
    events.push_back(std::move(j));
  }
  why = "no [DONE]";
  return std::nullopt;
}

}  // namespace

std::optional<std::string> answer_text(const Exchange& e, bool chat, bool stream,
                                       std::string& why) {
  try {
    if (!stream) {
      if (e.content_type != "application/json") {
        why = "Content-Type " + e.content_type;
        return std::nullopt;
      }
      const json j = json::parse(e.body);
      const json& choice = j.at("choices").at(0);
      return chat ? choice.at("message").at("content").get<std::string>()
                  : choice.at("text").get<std::string>();
    }
    if (e.content_type != "text/event-stream") {
      why = "Content-Type " + e.content_type;
      return std::nullopt;
    }
    const auto events = sse_events(e.body, why);
    if (!events) return std::nullopt;
    std::string text;
    for (const json& event : *events) {
      const json& choice = event.at("choices").at(0);
      if (chat) {
        if (choice.at("delta").contains("content"))
          text += choice["delta"]["content"].get<std::string>();
      } else {
        text += choice.at("text").get<std::string>();
      }
    }
    return text;
  } catch (const json::exception& x) {
    why = std::string("malformed answer: ") + x.what();
    return std::nullopt;
  }
}

std::string clean_error_problem(const Exchange& e) {
  if (e.status < 400) return "status " + std::to_string(e.status) + " is not an error";
  const json j = json::parse(e.body, nullptr, false);
  if (j.is_discarded() || !j.contains("error")) return "not an error object: " + e.body;
  const json& err = j["error"];
  if (!err.contains("message") || !err["message"].is_string() || !err.contains("type") ||
      !err["type"].is_string() || err.value("code", 0) != e.status) {
    return "not OpenAI's error shape: " + e.body;
  }
  return "";
}

std::optional<double> metric_value(const std::string& text, const std::string& name) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(name + " ", 0) == 0) return std::stod(line.substr(name.size() + 1));
  }
  return std::nullopt;
}

}  // namespace llama::test::load
