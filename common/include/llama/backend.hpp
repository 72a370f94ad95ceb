// The backend protocol: what the generation loop and tools ask of any backend.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "llama/kv_cache.hpp"
#include "llama/model.hpp"
#include "llama/numerics.hpp"
#include "llama/sequence_runs.hpp"

namespace llama {

struct BackendOptions {
  int threads = 0;  // 0: every core
  // exact (the default) or fast (llama/numerics.hpp): a backend that has no
  // fast kernels runs exact under both.
  Numerics numerics = Numerics::exact;
  // The KV cache's dtype (llama/kv_cache.hpp): the model's default (Model::
  // kv_cache: f16 for GGUF, f32 otherwise) or f32/f16. A backend that cannot
  // run the dtype asked for refuses it at prepare with one line.
  KvCacheOption kv_cache = KvCacheOption::model_default;
  // Sequences the backend holds at once (forward_runs), each with its own KV cache
  // of `context` positions (0: the model's seq_len). prepare refuses a count x
  // context whose run state does not fit in memory, before allocating.
  int32_t sequences = 1;
  int64_t context = 0;
};

class InferenceBackend {
 public:
  virtual ~InferenceBackend() = default;

  virtual std::string name() const = 0;

  // The weight dtypes this backend runs (ggml's supports_op, per dtype).
  // prepare refuses a model with a tensor of any other dtype, naming the
  // backend, the tensor and the dtype (require_dtypes in weights.hpp). The
  // default, f32 only, suits a backend written before dtypes existed.
  virtual DTypeSet supported_dtypes() const { return {DType::f32}; }

  // Takes the model (the backend may keep views into its weights; the Model
  // and its storage outlive the backend's use of them) and allocates run
  // state such as the KV cache. Calling it again starts over at position 0.
  virtual void prepare(const Model& model) = 0;

  // Runs `token` at position `pos` and returns vocab_size logits, valid until
  // the next call on this backend. `pos` is at most the number of positions
  // run since prepare (no gaps) and below seq_len. It may be lower: a rewind
  // (ChatSession keeps only the longest prefix a new turn shares with the
  // cache). A call at position p discards whatever the cache held from p on:
  // the logits are a fresh run's of the tokens at 0 .. p - 1 still held, then
  // `token`. A cache indexed by position does this by overwriting row p.
  virtual std::span<const float> forward(int32_t token, int64_t pos) = 0;

  // Runs tokens at positions start_pos, start_pos + 1, ... (start_pos as for
  // forward: no gaps, and a rewind when below the positions run). Returns the
  // last position's logits [vocab_size], or with `all_logits` every
  // position's [tokens.size(), vocab_size]. The default loops over forward;
  // backends with matrix-matrix kernels override it.
  virtual std::span<const float> forward_batch(std::span<const int32_t> tokens, int64_t start_pos,
                                               bool all_logits = false);

  // Sequences this backend holds at once: BackendOptions::sequences for one that
  // runs them natively (and a wrapper around one), 1 for one that runs a single
  // sequence (forward and forward_batch are sequence 0). The registry runs several
  // sequences on a backend that holds one by replay (llama/replay_sequences.hpp).
  virtual int32_t sequences() const { return 1; }

  // One step for several sequences (plugin protocol 6, docs/backends.md "Many
  // sequences"): each run is one sequence's tokens at consecutive positions, with the
  // rewind rule of forward for that sequence alone. Returns the rows of logits the
  // runs ask for, in run order: f32 [logit_rows(runs), vocab_size], valid until the
  // next call. A refused call (SequenceLengths::check) changes nothing. The default
  // runs sequence 0's runs one after another through forward_batch and refuses any
  // other sequence; a backend that holds several overrides it.
  virtual std::span<const float> forward_runs(std::span<const SequenceRun> runs);

  // True when, under the numerics this backend was created with, a sequence's logits
  // for each of its tokens are bit-identical whatever else shares a forward_runs call
  // (other sequences at any positions, in any order) and however its tokens were split
  // into runs: a server's answers then never depend on its load. llama-conformance
  // holds a backend that claims it to bit-identity, one that does not to its tolerance.
  virtual bool batch_invariant() const { return false; }

  // Optional human-readable account of what prepare built (kernels, plans,
  // memory); empty when the backend has nothing to say.
  virtual std::string describe() const { return {}; }

  // Optional account of what the backend did since it was created (call
  // counts, timings), for an app to show at the end of a run; empty when there
  // is nothing to say. Library code never prints, so wrappers such as
  // counting and timing report through this. A wrapper appends its inner
  // backend's report.
  virtual std::string report() const { return {}; }

 protected:
  std::vector<float> batch_logits_;  // f32 [n_tokens, vocab_size], default forward_batch
  std::vector<float> run_logits_;    // f32 [logit rows, vocab_size], default forward_runs
};

// Throws Error unless `token` is in the vocabulary and `pos` in [0, seq_len).
void check_token_position(const Config& config, int32_t token, int64_t pos);

// What a backend's prepare learns from admitting a model.
struct Admission {
  // The model's config with seq_len the positions each sequence holds
  // (BackendOptions::context, or the model's own): what the backend sizes its run
  // state by and checks positions against.
  Config config;
  int32_t sequences = 1;        // backend.sequences()
  KvChoice kv;                  // the KV cache's dtype (and why, for describe())
  int64_t run_state_bytes = 0;  // run_state_bytes(config, kv.dtype, sequences), memory_budget.hpp
};

// The checks every backend's prepare starts with, before it allocates anything,
// so every backend refuses a model with the same line: the weights' dtypes
// against backend.supported_dtypes() (require_dtypes, weights.hpp), then the KV
// cache's dtype from `options.kv_cache` (resolve_kv_cache, kv_cache.hpp), then
// `options.context` against the model's seq_len, then the run state of
// backend.sequences() caches of that many positions in that dtype against the
// memory available (require_run_state_memory, memory_budget.hpp). Throws their Error; a model with
// a dtype the backend does not run is refused as such even when its run state would not fit either.
// A backend that needs memory beyond the run state (weight copies, scratch) checks run_state_bytes
// plus its own with require_memory afterwards.
Admission admit(const Model& model, const InferenceBackend& backend, const BackendOptions& options);

}  // namespace llama
