// The content providers of completions answers (completion_writer.hpp).
#include "completion_writer.hpp"

#include <chrono>
#include <optional>

namespace llama::server {
namespace {

using Clock = std::chrono::steady_clock;

// How long a writer waits for its channels before it checks on its client, and how
// long a stream with nothing to send waits before it writes an SSE comment: a
// streamed client's departure shows when a write fails.
constexpr std::chrono::milliseconds kPoll(200);
constexpr std::chrono::seconds kKeepAlive(1);

std::string sse(const nlohmann::json& j) { return "data: " + to_text(j) + "\n\n"; }

// One choice of an answer being written.
struct ChoiceState {
  bool first = true;          // no chunk written yet (chat: the role goes first)
  bool ended = false;         // finished or failed
  size_t text_offset = 0;     // completions' logprobs: bytes of the tokens sent so far
  std::optional<Choice> out;  // a whole answer's finished choice
};

// What the provider and its releaser share.
struct Writer {
  PendingChoices p;
  ActiveStreams* streams = nullptr;
  std::vector<ChoiceState> states;
  uint64_t seen = 0;  // the wakeup's count as of the last look
  bool ended = false;
  Clock::time_point last_write = Clock::now();

  bool all_ended() const {
    for (const ChoiceState& s : states)
      if (!s.ended) return false;
    return true;
  }
  // The releaser: done, or the client went away; choices still running are cancelled.
  void release() {
    for (size_t i = 0; i < states.size(); ++i) {
      if (!states[i].ended) p.engine->cancel(p.channels[i]);
    }
    streams->leave();
  }
};

std::shared_ptr<Writer> make_writer(ActiveStreams& streams, PendingChoices choices) {
  auto w = std::make_shared<Writer>();
  w->states.resize(choices.channels.size());
  w->p = std::move(choices);
  w->streams = &streams;
  return w;
}

// One call of a stream's provider: writes what arrived; false when the client is gone.
bool write_stream(Writer& w, httplib::DataSink& sink) {
  const auto write = [&](const std::string& text) {
    w.last_write = Clock::now();
    return sink.write(text.data(), text.size());
  };
  const ResponseHeader& h = w.p.header;
  const bool chat = h.endpoint == Endpoint::chat_completions;
  if (chat && w.states[0].first) {
    w.states[0].first = false;  // the role first, before any token, as OpenAI's streams do
    return write(sse(chunk_json(h, 0, "", true)));
  }
  w.seen = w.p.wakeup->wait(w.seen, kPoll);
  std::string out;
  GenerationUsage usage;
  for (size_t i = 0; i < w.states.size(); ++i) {
    ChoiceState& s = w.states[i];
    if (s.ended) continue;
    RequestChannel::Update u = w.p.channels[i]->take(std::chrono::milliseconds(0));
    const auto index = static_cast<int64_t>(i);
    if (u.error) {
      // The stream ends with the error; the releaser cancels the other choices.
      s.ended = w.ended = true;
      const bool ok = write(out + sse(u.error->to_json()));
      sink.done();
      return ok;
    }
    if (!u.text.empty() || !u.logprobs.empty()) {
      nlohmann::json logprobs;
      if (w.p.logprobs >= 0) {
        logprobs = logprobs_json(h.endpoint, u.logprobs, s.text_offset);
        for (const GeneratedLogprob& g : u.logprobs) s.text_offset += g.piece.size();
      }
      out += sse(chunk_json(h, index, u.text, s.first, logprobs));
      s.first = false;
    }
    if (u.finished) {
      s.ended = true;
      out += sse(chunk_json(h, index, "", false, nullptr, finish_reason(u.finished->stop_reason)));
      s.out = Choice{index, std::move(*u.finished), {}};
    }
  }
  if (w.all_ended()) {
    w.ended = true;
    if (w.p.include_usage) {
      for (const ChoiceState& s : w.states) {
        usage.prompt_tokens += s.out->completion.usage.prompt_tokens;
        usage.cached_prompt_tokens += s.out->completion.usage.cached_prompt_tokens;
        usage.completion_tokens += s.out->completion.usage.completion_tokens;
      }
      out += sse(usage_chunk_json(h, usage));
    }
    out += "data: [DONE]\n\n";
    const bool ok = write(out);
    sink.done();
    return ok;
  }
  if (!out.empty()) return write(out);
  if (Clock::now() - w.last_write >= kKeepAlive) return write(": keep-alive\n\n");
  return true;
}

// One call of a whole answer's provider: waits a little for the choices; when all
// ended, writes the object; meanwhile false once the client has closed its end.
bool write_whole(Writer& w, httplib::DataSink& sink) {
  w.seen = w.p.wakeup->wait(w.seen, kPoll);
  for (size_t i = 0; i < w.states.size(); ++i) {
    ChoiceState& s = w.states[i];
    if (s.ended) continue;
    std::optional<RequestChannel::Update> u =
        w.p.channels[i]->wait_finished(std::chrono::milliseconds(0));
    if (!u) continue;
    s.ended = true;
    if (u->error) {
      // Generation failed after the status was sent (a backend error in a step): the
      // body is the error object; the releaser cancels the other choices.
      w.ended = true;
      const std::string body = to_text(u->error->to_json());
      const bool ok = sink.write(body.data(), body.size());
      sink.done();
      return ok;
    }
    s.out = Choice{static_cast<int64_t>(i), std::move(*u->finished), std::move(u->logprobs)};
  }
  if (!w.all_ended()) return sink.is_writable();
  w.ended = true;
  std::vector<Choice> choices;
  for (ChoiceState& s : w.states) choices.push_back(std::move(*s.out));
  const std::string body =
      to_text(completion_json(w.p.header, choices, w.p.logprobs, w.p.return_tokens));
  const bool ok = sink.write(body.data(), body.size());
  sink.done();
  return ok;
}

void answer(httplib::Response& res, ActiveStreams& streams, PendingChoices choices, bool stream) {
  std::shared_ptr<Writer> w = make_writer(streams, std::move(choices));
  streams.enter();
  res.status = 200;
  if (stream) res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider(
      stream ? "text/event-stream" : "application/json",
      [w, stream](size_t, httplib::DataSink& sink) {
        // Outside the route's guard: nothing may escape into cpp-httplib's thread.
        try {
          return stream ? write_stream(*w, sink) : write_whole(*w, sink);
        } catch (const std::exception&) {
          return false;  // the connection closes; the releaser cancels the request
        }
      },
      [w](bool) { w->release(); });
}

}  // namespace

void answer_streamed(httplib::Response& res, ActiveStreams& streams, PendingChoices choices) {
  answer(res, streams, std::move(choices), true);
}

void answer_whole(httplib::Response& res, ActiveStreams& streams, PendingChoices choices) {
  answer(res, streams, std::move(choices), false);
}

}  // namespace llama::server
