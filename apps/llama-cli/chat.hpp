// llama-cli -m chat: run.c's chat mode on a terminal or a pipe.
#pragma once

#include <istream>
#include <ostream>

#include "cli_options.hpp"
#include "llama/backend.hpp"
#include "llama/tokenizers/tokenizer.hpp"

namespace llama::cli {

// The first user message is -p (when given), later ones are lines of `in`;
// end of input ends the session (exit 0), as does running out of steps.
// Text: "User: " before each line read, "Assistant: " before each reply,
// streamed. JSON: one object at the end with every turn.
int run_chat(const CliOptions& options, const Model& model, const Tokenizer& tokenizer,
             InferenceBackend& backend, std::istream& in, std::ostream& out, std::ostream& err);

}  // namespace llama::cli
