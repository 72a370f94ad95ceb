// The llama-server of the load and fault tests: its command line (stories1M on the
// graph backend, 4 sequences, a chat template) and the wait for it to be idle.
#pragma once

#include <string>
#include <vector>

#include "server_process.hpp"

namespace llama::test::load {

// llama-server's arguments: the test model, tokenizer and chat template, `-b graph
// --parallel 4 -j 1 --port 0`, then `extra`.
std::vector<std::string> server_args(const std::vector<std::string>& extra);

// Polls /slots and /metrics (bounded) until every sequence is idle and
// requests_processing and requests_deferred are 0; fails naming what is not.
void wait_idle(const ServerProcess& server, const std::string& api_key);

}  // namespace llama::test::load
