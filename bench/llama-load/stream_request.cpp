// Streamed requests through cpp-httplib's client (stream_request.hpp).
#include "stream_request.hpp"

#include <httplib.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "sse_parser.hpp"
#include "stream_chunk.hpp"

namespace llama::load {
namespace {

using Clock = std::chrono::steady_clock;

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

httplib::Client make_client(const LoadOptions& o) {
  httplib::Client c(o.host, o.port);
  const auto timeout = std::chrono::microseconds(static_cast<int64_t>(o.timeout * 1e6));
  c.set_connection_timeout(timeout);
  c.set_read_timeout(timeout);
  c.set_write_timeout(timeout);
  if (!o.api_key.empty()) c.set_bearer_token_auth(o.api_key.c_str());
  return c;
}

}  // namespace

std::optional<double> RequestRecord::decode_tokens_per_s() const {
  double span = 0;
  for (const double g : gaps_s) span += g;
  if (tokens < 2 || gaps_s.empty() || span <= 0) return std::nullopt;
  return static_cast<double>(tokens - 1) / span;
}

std::string request_body(const LoadOptions& o, const std::string& prompt) {
  nlohmann::json j;
  if (o.endpoint == Endpoint::chat) {
    j["messages"] = nlohmann::json::array({{{"role", "user"}, {"content", prompt}}});
  } else {
    j["prompt"] = prompt;
  }
  if (!o.model.empty()) j["model"] = o.model;
  j["max_tokens"] = o.max_tokens;
  j["ignore_eos"] = true;
  j["temperature"] = o.temperature;
  if (o.seed) j["seed"] = *o.seed;
  j["stream"] = true;
  j["stream_options"] = {{"include_usage", true}};
  return j.dump();
}

const char* endpoint_path(const LoadOptions& o) {
  return o.endpoint == Endpoint::chat ? "/v1/chat/completions" : "/v1/completions";
}

RequestRecord stream_request(const LoadOptions& o, const std::string& body) {
  RequestRecord r;
  httplib::Client client = make_client(o);
  SseParser parser;
  std::string error_body;  // a non-200 answer's body
  std::optional<std::string> stream_error;
  bool done = false;
  std::optional<int64_t> usage_tokens;
  Clock::time_point start, last;

  httplib::Request req;
  req.method = "POST";
  req.path = endpoint_path(o);
  req.body = body;
  req.set_header("Content-Type", "application/json");
  req.set_header("Accept", "text/event-stream");
  req.response_handler = [&](const httplib::Response& res) {
    r.status = res.status;
    return true;
  };
  req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
    const Clock::time_point now = Clock::now();  // every event of this read arrived now
    if (r.status != 200) {
      if (error_body.size() < 4096) error_body.append(data, std::min<size_t>(n, 4096));
      return true;
    }
    const std::vector<std::string> events = parser.feed({data, n});
    if (parser.overflowed()) {
      stream_error =
          "an event in the stream over " + std::to_string(SseParser::kMaxEventBytes) + " bytes";
      return false;
    }
    for (const std::string& event : events) {
      const StreamChunk c = parse_stream_chunk(event, o.endpoint);
      if (c.error) {
        stream_error = "error event in the stream: " + *c.error;
        return false;  // the server ended this request; stop reading
      }
      if (c.done) done = true;
      if (c.completion_tokens) usage_tokens = c.completion_tokens;
      if (c.has_content) {
        if (r.chunks == 0) {
          r.ttft_s = seconds(now - start);
        } else {
          r.gaps_s.push_back(seconds(now - last));
        }
        last = now;
        ++r.chunks;
      }
    }
    return true;
  };
  start = Clock::now();
  const httplib::Result res = client.send(req);
  r.total_s = seconds(Clock::now() - start);
  if (stream_error) {
    r.error = *stream_error;
  } else if (!res) {
    r.status = 0;
    r.error = "no answer: " + httplib::to_string(res.error());
  } else if (res->status != 200) {
    r.status = res->status;
    r.error = error_message(error_body.empty() ? res->body : error_body);
    if (r.error.empty()) r.error = "(an empty body)";
  } else if (!done) {
    r.error = "the stream ended without data: [DONE]";
  } else if (r.chunks == 0) {
    r.error = "the stream had no generated text";
  } else {
    r.ok = true;
  }
  r.tokens_from_usage = usage_tokens.has_value();
  r.tokens = usage_tokens.value_or(r.chunks);
  return r;
}

std::optional<std::string> unreachable(const LoadOptions& o) {
  httplib::Client client = make_client(o);
  const httplib::Result res = client.Get("/v1/models");
  if (res) return std::nullopt;
  return httplib::to_string(res.error());
}

}  // namespace llama::load
