// Running one concurrency level: N client threads sending the same request back to
// back, for a number of requests or a duration.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "load_options.hpp"
#include "stream_request.hpp"

namespace llama::load {

struct LevelRun {
  int concurrency = 0;
  double wall_s = 0;  // first request sent -> last request ended
  std::vector<RequestRecord> records;
};

// Each request sends next_body() (called from the client threads); `requests` > 0: that many
// requests shared by the clients; else requests start until `duration_s` has passed (those started
// finish and count).
LevelRun run_level(const LoadOptions& o, const std::function<std::string()>& next_body,
                   int concurrency, int64_t requests, double duration_s);

}  // namespace llama::load
