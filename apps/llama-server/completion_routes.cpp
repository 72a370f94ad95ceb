// The completions routes (completion_routes.hpp).
#include "completion_routes.hpp"

#include <chrono>
#include <memory>

#include "completion_request.hpp"
#include "completion_writer.hpp"
#include "error_report.hpp"
#include "http_reply.hpp"
#include "json_fields.hpp"
#include "openai_json.hpp"

namespace llama::server {
namespace {

using Clock = std::chrono::steady_clock;

// A prompt as the model sees it: text encoded with BOS, token ids checked against the
// vocabulary, messages rendered by the chat template. `field` names it in errors.
std::vector<int32_t> prompt_tokens(const LoadedModel& m, const CompletionRequest& r,
                                   const Prompt* prompt, const std::string& field) {
  const Tokenizer& tok = *m.tokenizer;
  std::vector<int32_t> tokens;
  if (r.endpoint == Endpoint::chat_completions) {
    if (!m.chat_format) {
      throw invalid_field("messages",
                          "the model has no chat template; start the server with "
                          "--chat-template FILE");
    }
    tokens = m.chat_format->encode(tok, m.chat_format->render(r.messages), true);
  } else if (prompt->is_tokens) {
    tokens = in_vocabulary(prompt->tokens, m.model.config.vocab_size, field);
  } else {
    tokens = tok.encode(prompt->text, {.add_special = true, .parse_special = true});
  }
  if (tokens.empty()) throw invalid_field(field, "encodes to no tokens");
  const int64_t context = m.engine->context();
  if (static_cast<int64_t>(tokens.size()) > context) {
    throw invalid_field(field, "the prompt is " + std::to_string(tokens.size()) +
                                   " tokens, longer than the context of " +
                                   std::to_string(context) + " positions (--ctx-size)");
  }
  return tokens;
}

// Every prompt of the request, encoded and checked before any is submitted.
std::vector<std::vector<int32_t>> all_prompts(const LoadedModel& m, const CompletionRequest& r) {
  if (r.endpoint == Endpoint::chat_completions) return {prompt_tokens(m, r, nullptr, "messages")};
  std::vector<std::vector<int32_t>> out;
  for (size_t i = 0; i < r.prompts.size(); ++i) {
    const std::string field =
        r.prompts.size() == 1 ? "prompt" : "prompt[" + std::to_string(i) + "]";
    out.push_back(prompt_tokens(m, r, &r.prompts[i], field));
  }
  return out;
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

// Cancels the submitted choices unless release() was called: a request that fails
// before its answer is set up leaves nothing running.
class Submitted {
 public:
  explicit Submitted(Engine& engine) : engine_(engine) {}
  ~Submitted() {
    for (const auto& c : channels_) engine_.cancel(c);
  }
  Submitted(const Submitted&) = delete;
  Submitted& operator=(const Submitted&) = delete;
  void add(std::shared_ptr<RequestChannel> c) { channels_.push_back(std::move(c)); }
  const std::vector<std::shared_ptr<RequestChannel>>& channels() const { return channels_; }
  std::vector<std::shared_ptr<RequestChannel>> release() { return std::move(channels_); }

 private:
  Engine& engine_;
  std::vector<std::shared_ptr<RequestChannel>> channels_;
};

void serve_completion(ServerContext& ctx, Endpoint endpoint, const httplib::Request& req,
                      httplib::Response& res) {
  const LoadedModel& m = ready_model(ctx);
  const CompletionRequest r = parse_completion_request(req.body, endpoint);
  std::vector<std::vector<int32_t>> prompts = all_prompts(m, r);
  if (ctx.options.log_prompts) {
    for (const auto& p : prompts) ctx.log("prompt " + cli::one_line(m.tokenizer->decode(p)));
  }
  PendingChoices choices;
  choices.engine = m.engine.get();
  choices.wakeup = std::make_shared<Wakeup>();
  choices.header = {endpoint,
                    (endpoint == Endpoint::chat_completions ? "chatcmpl-" : "cmpl-") +
                        std::to_string(ctx.next_id++),
                    std::chrono::duration_cast<std::chrono::seconds>(
                        std::chrono::system_clock::now().time_since_epoch())
                        .count(),
                    r.model.empty() ? m.name : r.model};
  choices.logprobs = r.logprobs;
  choices.include_usage = r.include_usage;
  choices.return_tokens = r.return_tokens;
  Submitted submitted(*m.engine);
  for (auto& p : prompts)
    submitted.add(m.engine->submit(generation_request(ctx, m, r, std::move(p)), choices.wakeup));
  // Until the generator has taken every choice, an error is still the response's
  // status; the engine takes or refuses each at its next look (every step).
  for (const auto& c : submitted.channels()) {
    while (!c->wait_started(std::chrono::milliseconds(200))) {
    }
    if (std::optional<ApiError> e = c->error()) throw *e;
  }
  choices.channels = submitted.release();
  if (r.stream) {
    answer_streamed(res, ctx.streams, std::move(choices));
  } else {
    answer_whole(res, ctx.streams, std::move(choices));
  }
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
