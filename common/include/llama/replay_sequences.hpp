// Several sequences on a backend that holds one: the registry wraps such a backend in
// this when BackendOptions::sequences > 1. It keeps every sequence's tokens; its one KV
// cache holds the sequence run last, and a run of another sequence first runs that
// sequence's tokens again from where the two part (the rewind rule of forward). Correct,
// not fast: a switch costs the tokens that differ, and decode of n sequences costs n
// passes over the weights.
#pragma once

#include <memory>

#include "llama/backend.hpp"

namespace llama {

// Throws Error unless `inner` holds one sequence and options.sequences is in range.
std::unique_ptr<InferenceBackend> replay_sequences(std::unique_ptr<InferenceBackend> inner,
                                                   const BackendOptions& options);

}  // namespace llama
