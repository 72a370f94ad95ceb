// Writing a completions request's answer while its choices generate: Server-Sent
// Events for a streamed request, the one JSON object for a non-streamed one. Both go
// through cpp-httplib's chunked content provider, whose DataSink can tell whether
// the client is still there: a request whose client left is cancelled, streamed or
// not, and its sequences are free for others.
#pragma once

#include <httplib.h>

#include <memory>
#include <vector>

#include "engine.hpp"
#include "openai_json.hpp"
#include "server_context.hpp"

namespace llama::server {

// A request's choices on their way through the engine, one channel per prompt (in
// the prompts' order), all sharing `wakeup`.
struct PendingChoices {
  Engine* engine = nullptr;
  std::shared_ptr<Wakeup> wakeup;
  std::vector<std::shared_ptr<RequestChannel>> channels;
  ResponseHeader header;
  int logprobs = -1;
  bool include_usage = false;
  bool return_tokens = false;
};

// Sets `res` to answer with `choices` as a stream (stream: true) or as one object.
// Every channel must have been taken by the engine (RequestChannel::wait_started).
void answer_streamed(httplib::Response& res, ActiveStreams& streams, PendingChoices choices);
void answer_whole(httplib::Response& res, ActiveStreams& streams, PendingChoices choices);

}  // namespace llama::server
