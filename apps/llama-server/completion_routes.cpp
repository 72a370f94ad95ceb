// The completions routes (completion_routes.hpp).
#include "completion_routes.hpp"

#include <chrono>
#include <memory>

#include "completion_request.hpp"
#include "error_report.hpp"
#include "http_reply.hpp"
#include "json_fields.hpp"
#include "openai_json.hpp"

namespace llama::server {
namespace {

using Clock = std::chrono::steady_clock;

// How long a stream's writer waits for tokens before it checks on its client, and
// how long with nothing to send before it writes an SSE comment: writing is how a
// closed connection is noticed (its request is then cancelled).
constexpr std::chrono::milliseconds kPoll(200);
constexpr std::chrono::seconds kKeepAlive(1);

// The prompt as the model sees it: text encoded with BOS, token ids checked against
// the vocabulary, messages rendered by the chat template.
std::vector<int32_t> prompt_tokens(const LoadedModel& m, const CompletionRequest& r) {
  const Tokenizer& tok = *m.tokenizer;
  std::vector<int32_t> tokens;
  if (r.endpoint == Endpoint::chat_completions) {
    if (!m.chat_format) {
      throw invalid_field("messages",
                          "the model has no chat template; start the server with "
                          "--chat-template FILE");
    }
    tokens = m.chat_format->encode(tok, m.chat_format->render(r.messages), true);
  } else if (r.prompt_is_tokens) {
    tokens = in_vocabulary(r.prompt_tokens, m.model.config.vocab_size, "prompt");
  } else {
    tokens = tok.encode(r.prompt_text, {.add_special = true, .parse_special = true});
  }
  const char* field = r.endpoint == Endpoint::chat_completions ? "messages" : "prompt";
  if (tokens.empty()) throw invalid_field(field, "encodes to no tokens");
  const int64_t context = m.engine->context();
  if (static_cast<int64_t>(tokens.size()) > context) {
    throw invalid_field(field, "the prompt is " + std::to_string(tokens.size()) +
                                   " tokens, longer than the context of " +
                                   std::to_string(context) + " positions (--ctx-size)");
  }
  return tokens;
}

GenerationRequest generation_request(const ServerContext& ctx, const LoadedModel& m,
                                     const CompletionRequest& r, std::vector<int32_t> prompt) {
  const ServerOptions& o = ctx.options;
  GenerationRequest g;
  g.prompt = std::move(prompt);
  g.sampling.temperature = r.temperature.value_or(o.temperature);
  g.sampling.top_p = r.top_p.value_or(o.top_p);
  // A seed of 0 means "the time", as llama-cli's -r 0 (xorshift needs a non-zero state).
  uint64_t seed = r.seed.value_or(o.seed.value_or(0));
  if (seed == 0) seed = static_cast<uint64_t>(Clock::now().time_since_epoch().count()) | 1u;
  g.sampling.seed = seed;
  g.max_tokens = r.max_tokens.value_or(0);
  g.stop = r.stop;
  g.eos = m.eos;
  g.stop_at_bos = m.stop_at_bos;
  g.ignore_eos = r.ignore_eos;
  g.logprobs = r.logprobs;
  return g;
}

std::string sse(const nlohmann::json& j) { return "data: " + to_text(j) + "\n\n"; }

// A streamed response's state, shared by the content provider and its releaser.
struct Stream {
  std::shared_ptr<RequestChannel> channel;
  Engine* engine = nullptr;
  ActiveStreams* streams = nullptr;
  ResponseHeader header;
  bool include_usage = false;
  bool first = true;
  bool ended = false;
  Clock::time_point last_write = Clock::now();
};

// One call of the chunked content provider: writes what arrived; false when the
// client is gone (cpp-httplib then closes the connection and calls the releaser).
bool write_stream(Stream& s, httplib::DataSink& sink) {
  const auto write = [&](const std::string& text) {
    s.last_write = Clock::now();
    return sink.write(text.data(), text.size());
  };
  if (s.first && s.header.endpoint == Endpoint::chat_completions) {
    s.first = false;  // the role first, before any token, as OpenAI's streams do
    return write(sse(chunk_json(s.header, "", true)));
  }
  RequestChannel::Update u = s.channel->take(kPoll);
  if (u.error) {
    s.ended = true;
    const bool ok = write(sse(u.error->to_json()));
    sink.done();
    return ok;
  }
  if (!u.text.empty()) {
    if (!write(sse(chunk_json(s.header, u.text, s.first)))) return false;
    s.first = false;
  }
  if (u.finished) {
    s.ended = true;
    std::string tail = sse(chunk_json(s.header, "", false, finish_reason(u.finished->stop_reason)));
    if (s.include_usage) tail += sse(usage_chunk_json(s.header, u.finished->usage));
    tail += "data: [DONE]\n\n";
    const bool ok = write(tail);
    sink.done();
    return ok;
  }
  if (u.text.empty() && Clock::now() - s.last_write >= kKeepAlive) return write(": keep-alive\n\n");
  return true;
}

void serve_completion(ServerContext& ctx, Endpoint endpoint, const httplib::Request& req,
                      httplib::Response& res) {
  const LoadedModel& m = ready_model(ctx);
  const CompletionRequest r = parse_completion_request(req.body, endpoint);
  std::vector<int32_t> prompt = prompt_tokens(m, r);
  if (ctx.options.log_prompts) {
    ctx.log("prompt " + cli::one_line(m.tokenizer->decode(prompt)));
  }
  ResponseHeader header{endpoint,
                        (endpoint == Endpoint::chat_completions ? "chatcmpl-" : "cmpl-") +
                            std::to_string(ctx.next_id++),
                        std::chrono::duration_cast<std::chrono::seconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count(),
                        r.model.empty() ? m.name : r.model};
  std::shared_ptr<RequestChannel> channel =
      m.engine->submit(generation_request(ctx, m, r, std::move(prompt)));
  if (!r.stream) {
    // The engine ends every request (shutdown cancels what is left), so this returns.
    RequestChannel::Update u = channel->wait_finished();
    if (u.error) throw *u.error;
    send_json(res, 200, completion_json(header, *u.finished, r.logprobs, r.return_tokens));
    return;
  }
  auto stream = std::make_shared<Stream>();
  stream->channel = std::move(channel);
  stream->engine = m.engine.get();
  stream->streams = &ctx.streams;
  stream->header = std::move(header);
  stream->include_usage = r.include_usage;
  ctx.streams.enter();
  res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider(
      "text/event-stream",
      [stream](size_t, httplib::DataSink& sink) {
        // Outside the route's guard: nothing may escape into cpp-httplib's thread.
        try {
          return write_stream(*stream, sink);
        } catch (const std::exception&) {
          return false;  // the connection closes; the releaser cancels the request
        }
      },
      [stream](bool) {
        // Done, or the client went away: a request still running is cancelled.
        if (!stream->ended) stream->engine->cancel(stream->channel);
        stream->streams->leave();
      });
}

}  // namespace

void add_completion_routes(httplib::Server& http, ServerContext& ctx) {
  http.Post("/v1/completions", guarded([&ctx](const httplib::Request& req, httplib::Response& res) {
              serve_completion(ctx, Endpoint::completions, req, res);
            }));
  http.Post("/v1/chat/completions",
            guarded([&ctx](const httplib::Request& req, httplib::Response& res) {
              serve_completion(ctx, Endpoint::chat_completions, req, res);
            }));
}

}  // namespace llama::server
