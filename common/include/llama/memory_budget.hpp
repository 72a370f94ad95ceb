// Memory asked for before it is taken: what a model's run state needs, what
// the machine can still give, and a refusal (llama::Error) when the first is
// larger, so a header from a stranger cannot reach std::bad_alloc or the OOM killer.
#pragma once

#include <cstdint>
#include <string>

#include "llama/config.hpp"
#include "llama/model.hpp"

namespace llama {

// Bytes of run.c's RunState for `config`: activations x, xb2 (f32 [dim]), xb, q
// (f32 [max(dim, q_dim)] each), hb, hb2 (f32 [hidden_dim]), attention scores (f32 [n_heads,
// seq_len]), logits (f32 [vocab_size]) and the KV cache (f32 [2, n_layers, seq_len, kv_dim]).
// Throws Error on overflow (a validated Config cannot overflow). With `kv`
// f16 the cache is f16 [2, n_layers, seq_len, kv_dim], half the bytes.
// With `sequences` > 1, that many KV caches (one per sequence, plugin protocol 6).
int64_t run_state_bytes(const Config& config, KvDType kv = KvDType::f32, int32_t sequences = 1);
// The KV cache alone, keys and values: kv [sequences, 2, n_layers, seq_len, kv_dim].
int64_t kv_cache_bytes(const Config& config, KvDType kv = KvDType::f32, int32_t sequences = 1);

struct MemoryAvailable {
  int64_t bytes = 0;
  std::string source;  // where the figure comes from, e.g. "MemAvailable in /proc/meminfo"
};

// What this process can still allocate: MemAvailable from /proc/meminfo
// (sysconf(_SC_AVPHYS_PAGES) if unreadable), lowered to the cgroup v2
// memory.max minus memory.current and to RLIMIT_AS when those are set.
MemoryAvailable available_memory();

// Throws Error "<source>: <what> needs N bytes ... but only M bytes are
// available (<available.source>)" when bytes_needed > available.bytes.
void require_memory(int64_t bytes_needed, const std::string& what, const MemoryAvailable& available,
                    const std::string& source);

// The one line a backend's prepare starts with (through admit, backend.hpp): refuses
// the run state of `config` (the model's, seq_len the positions each sequence holds)
// when it does not fit in available_memory(), before anything is allocated. `kv`: the
// cache's dtype the backend will allocate; `sequences`: how many caches. `source`
// names the model in the message.
void require_run_state_memory(const Config& config, const std::string& source,
                              KvDType kv = KvDType::f32, int32_t sequences = 1);

}  // namespace llama
