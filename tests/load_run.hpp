// Client threads that load a llama-server until told to stop: each sends the
// templates of load_requests.hpp (streamed or not, a few cut after their first
// chunk) in an order of its own and checks every answer against the template's
// expected text, or as a clean error. Failures are collected as lines naming the
// request, for the test to report.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "load_requests.hpp"

namespace llama::test::load {

struct LoadOptions {
  int port = 0;
  int clients = 64;
  std::string api_key;
  std::vector<std::string> expected;  // per template, its text alone
  int cut_one_in = 8;                 // of streamed requests, those closed after a chunk
  std::chrono::seconds request_deadline{60};
};

struct LoadReport {
  std::map<std::string, int> outcomes;  // "chat stream ok", "completion 503", ...
  std::vector<std::string> failures;    // each naming its request
  int requests = 0;
};

class LoadRun {
 public:
  explicit LoadRun(LoadOptions options);  // starts the clients
  ~LoadRun();                             // stop()
  LoadRun(const LoadRun&) = delete;
  LoadRun& operator=(const LoadRun&) = delete;
  // Lets each client finish its request in flight, joins them and reports.
  LoadReport stop();

 private:
  void client(int index);
  void record(const std::string& outcome, const std::string& failure);

  const LoadOptions options_;
  std::atomic<bool> stopping_{false};
  std::vector<std::thread> threads_;
  std::mutex mutex_;
  LoadReport report_;
};

// The text template `t` gives sent alone (not streamed) to the server; the request
// and its answer are REQUIREd good.
std::string expected_text(int port, const Template& t, const std::string& api_key);

}  // namespace llama::test::load
