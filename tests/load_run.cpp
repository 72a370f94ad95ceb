// Load-generating client threads (load_run.hpp).
#include "load_run.hpp"

#include <catch2/catch.hpp>

#include <random>

namespace llama::test::load {
namespace {

constexpr size_t kMaxFailuresKept = 20;
// A client refused with 503 waits this long before its next request, so a full
// queue costs little CPU.
constexpr auto kBusyBackoff = std::chrono::milliseconds(250);

}  // namespace

LoadRun::LoadRun(LoadOptions options) : options_(std::move(options)) {
  for (int i = 0; i < options_.clients; ++i) threads_.emplace_back([this, i] { client(i); });
}

LoadRun::~LoadRun() { stop(); }

LoadReport LoadRun::stop() {
  stopping_ = true;
  for (std::thread& t : threads_) {
    if (t.joinable()) t.join();
  }
  std::lock_guard lock(mutex_);
  return report_;
}

void LoadRun::record(const std::string& outcome, const std::string& failure) {
  std::lock_guard lock(mutex_);
  ++report_.requests;
  ++report_.outcomes[outcome];
  if (!failure.empty() && report_.failures.size() < kMaxFailuresKept)
    report_.failures.push_back(failure);
}

void LoadRun::client(int index) {
  std::mt19937 rng(static_cast<uint32_t>(index) + 1);
  // Every client starts at once: the server's listen backlog takes the burst.
  const std::vector<Template>& all = templates();
  for (int n = 0; !stopping_; ++n) {
    const size_t which = rng() % all.size();
    const Template& t = all[which];
    const bool stream = rng() % 2 == 0;
    const bool cut = stream && rng() % static_cast<uint32_t>(options_.cut_one_in) == 0;
    const std::string kind = std::string(t.chat ? "chat" : "completion") +
                             (stream ? (cut ? " cut" : " stream") : " whole");
    const std::string name = "client " + std::to_string(index) + " request " + std::to_string(n) +
                             " (" + t.name + (stream ? ", streamed" : "") +
                             (cut ? ", closed after its first chunk" : "") + ")";
    Call call;
    call.path = t.chat ? "/v1/chat/completions" : "/v1/completions";
    call.body = request_body(t, stream);
    call.api_key = options_.api_key;
    call.deadline = options_.request_deadline;
    call.close_after_first_chunk = cut;
    const Exchange e = exchange(options_.port, call);
    if (e.timed_out) {
      record(kind + " hung", name + ": no full answer within " +
                                 std::to_string(options_.request_deadline.count()) + " s");
    } else if (e.status == 503) {
      // A cut error body may be partial: only a whole one is checked.
      const std::string problem = e.cut ? "" : clean_error_problem(e);
      record(kind + " 503", problem.empty() ? "" : name + ": " + problem);
      std::this_thread::sleep_for(kBusyBackoff);
    } else if (e.status == 200 && cut) {
      record(kind + " ok", e.content_type == "text/event-stream"
                               ? ""
                               : name + ": Content-Type " + e.content_type);
    } else if (e.status == 200) {
      std::string why;
      const std::optional<std::string> text = answer_text(e, t.chat, stream, why);
      if (!text) {
        record(kind + " bad", name + ": " + why);
      } else if (*text != options_.expected[which]) {
        record(kind + " wrong",
               name + ": text \"" + *text + "\", alone \"" + options_.expected[which] + "\"");
      } else {
        record(kind + " ok", "");
      }
    } else if (e.status == 0) {
      record(kind + " transport", name + ": " + e.transport);
    } else {
      record(kind + " " + std::to_string(e.status),
             name + ": status " + std::to_string(e.status) + " " + e.body);
    }
  }
}

std::string expected_text(int port, const Template& t, const std::string& api_key) {
  Call call;
  call.path = t.chat ? "/v1/chat/completions" : "/v1/completions";
  call.body = request_body(t, false);
  call.api_key = api_key;
  const Exchange e = exchange(port, call);
  INFO(t.name << ": " << e.status << " " << e.transport << " " << e.body);
  REQUIRE(e.status == 200);
  std::string why;
  const std::optional<std::string> text = answer_text(e, t.chat, false, why);
  INFO(why);
  REQUIRE(text);
  REQUIRE(!text->empty());
  return *text;
}

}  // namespace llama::test::load
