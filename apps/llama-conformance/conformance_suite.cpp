// The suite's checks over the shared models, the generated shapes and the reference
// cases, and the loop that runs them and times each.
#include "conformance_suite.hpp"

#include <algorithm>
#include <chrono>
#include <optional>

#include "conformance_data.hpp"
#include "conformance_models.hpp"
#include "conformance_shapes.hpp"
#include "llama/error.hpp"
#include "llama/formats/gguf_model.hpp"
#include "llama/formats/llama2c_checkpoint.hpp"
#include "llama/registry.hpp"

namespace llama::conformance {
namespace {

const std::vector<std::string> kSharedModels = {"stories260K.bin", "rand-gqa.bin", "mini32k.bin"};
const char* const kQ8Model = "q-gqa.v2.bin";
// One GGUF file per block type (../shared/models/gguf): Q8_0, Q4_0, Q4_K (with
// Q6_K: the Q4_K_M mix) and Q6_K.
const char* const kGgufBlockModels[] = {"gguf/stories1M.q8_0.gguf", "gguf/stories1M.q4_0.gguf",
                                        "gguf/rand-k.q4_k_m.gguf", "gguf/rand-k.q6_k.gguf"};
constexpr int64_t kSharedPositions = 128;

// The first failure among `items`, each run by `check` and named in the message.
template <typename Items, typename Check>
CheckResult each(const Items& items, const Check& check) {
  CheckResult all;
  for (const auto& item : items) {
    const auto [name, r] = check(item);
    if (!r.ok) all.fail(name + ": " + r.failure);
  }
  return all;
}

CheckResult on_shared_models(const ConformanceData& data,
                             const std::function<CheckResult(const Checkpoint&)>& check) {
  return each(kSharedModels, [&](const std::string& file) {
    const Checkpoint ck = Checkpoint::open(data.model(file));
    return std::pair{file, check(ck)};
  });
}

CheckResult on_shapes(const ConformanceData& data,
                      const std::function<CheckResult(const Checkpoint&)>& check) {
  return each(generated_shapes(), [&](const Shape& shape) {
    const Checkpoint ck = Checkpoint::open(write_random_checkpoint(data, shape, 1234));
    return std::pair{shape.name, check(ck)};
  });
}

// stories260K.bin and the generated grouped-query shape, each failure named by its model.
CheckResult on_stories_and_gqa(const ConformanceData& data,
                               const std::function<CheckResult(const Model&)>& check) {
  const Checkpoint s260 = Checkpoint::open(data.model("stories260K.bin"));
  const Shape shape = generated_shapes()[1];
  const Checkpoint gqa = Checkpoint::open(write_random_checkpoint(data, shape, 1234));
  const std::pair<std::string, const Checkpoint*> models[] = {{"stories260K.bin", &s260},
                                                              {shape.name, &gqa}};
  return each(models, [&](const auto& m) { return std::pair{m.first, check(m.second->model())}; });
}

// check_batch_invariant on every model where the backend, prepared with it, claims
// batch invariance; not claimed when it claims it on none.
CheckResult check_batch_invariant_models(const ConformanceData& data, const std::string& spec) {
  std::vector<std::pair<std::string, Checkpoint>> files;
  files.emplace_back("stories260K.bin", Checkpoint::open(data.model("stories260K.bin")));
  const Shape shape = generated_shapes()[1];
  files.emplace_back(shape.name, Checkpoint::open(write_random_checkpoint(data, shape, 1234)));
  files.emplace_back(kQ8Model, Checkpoint::open(data.model(kQ8Model)));
  std::vector<std::pair<std::string, gguf::GgufModel>> ggufs;
  ggufs.emplace_back("gguf/stories1M.f16.gguf",
                     gguf::open_model(data.model("gguf/stories1M.f16.gguf")));
  for (const char* f : kGgufBlockModels) ggufs.emplace_back(f, gguf::open_model(data.model(f)));
  std::vector<std::pair<std::string, Model>> models;
  const Model& s260 = files.front().second.model();
  models.emplace_back("stories260K.bin in bf16", with_dtype(s260, DType::bf16, 0, true));
  models.emplace_back("stories260K.bin in f16", with_dtype(s260, DType::f16, 0, true));

  CheckResult all;
  int claimed = 0;
  const auto run = [&](const std::string& name, const Model& m) {
    BackendOptions o;
    o.sequences = 4;
    auto b = BackendRegistry::instance().create(spec, o);
    for (DType d : m.weights.dtypes().list())
      if (!b->supported_dtypes().contains(d)) return;
    b->prepare(m);
    if (!b->batch_invariant()) return;
    ++claimed;
    const CheckResult r = check_batch_invariant(spec, m);
    if (!r.ok) all.fail(name + ": " + r.failure);
  };
  for (const auto& [name, ck] : files) run(name, ck.model());
  for (const auto& [name, g] : ggufs) run(name, g.model);
  for (const auto& [name, m] : models) run(name, m);
  if (claimed == 0 && all.ok) {
    all.not_claimed = "batch-invariant: not claimed (" + spec +
                      "'s batch_invariant() is false after prepare on every model)";
  }
  return all;
}

CheckResult both(const CheckResult& a, const CheckResult& b) {
  CheckResult r = a;
  if (!b.ok) r.fail(b.failure);
  return r;
}

CheckResult reference_streams(const ConformanceData& data, const std::string& spec,
                              const std::string& file, DType dtype, size_t min_cases) {
  const auto cases = data.cases(file);
  CheckResult r;
  if (!cases.is_array() || cases.size() < min_cases) {
    r.fail(file + ": expected at least " + std::to_string(min_cases) + " cases");
    return r;
  }
  for (const auto& c : cases) {
    const std::string name = c["name"].get<std::string>();
    // The cases must exercise the format they stand for.
    const Checkpoint ck = Checkpoint::open(data.model(c["model"].get<std::string>()));
    if (!ck.model().weights.dtypes().contains(dtype)) {
      r.fail(name + ": its model " + c["model"].get<std::string>() + " holds no " +
             to_string(dtype) + " tensor");
      continue;
    }
    const CheckResult one = check_reference_stream(data, spec, c);
    if (!one.ok) r.fail(one.failure);
  }
  return r;
}

// The dtype a check's `format` names ("f32", "q8_0"), or none for "".
std::optional<DType> format_dtype(const std::string& format) {
  for (DType d : DTypeSet::all().list()) {
    if (format == to_string(d)) return d;
  }
  return std::nullopt;
}

DTypeSet claimed_dtypes(const std::string& spec) {
  return BackendRegistry::instance().create(spec)->supported_dtypes();
}

// The first dtype of `model`'s tensors that `claimed` lacks.
std::optional<DType> unclaimed_dtype(const Model& model, DTypeSet claimed) {
  for (DType d : model.weights.dtypes().list()) {
    if (!claimed.contains(d)) return d;
  }
  return std::nullopt;
}

// True when `message` names one of `model`'s dtypes that `claimed` lacks (a
// backend refuses at the first tensor it cannot run, in any order).
bool names_unclaimed_dtype(const std::string& message, const Model& model, DTypeSet claimed) {
  for (DType d : model.weights.dtypes().list()) {
    if (!claimed.contains(d) && message.find(to_string(d)) != std::string::npos) return true;
  }
  return false;
}

// For each model (one per dtype the suite has models for) holding a dtype the backend
// does not claim: prepare throws llama::Error with a one-line message naming the dtype,
// and the backend then still runs a model it claims.
CheckResult check_unclaimed_refused(const ConformanceData& data, const std::string& spec) {
  const DTypeSet claimed = claimed_dtypes(spec);
  const Checkpoint f32 = Checkpoint::open(data.model("stories260K.bin"));
  const Checkpoint q8 = Checkpoint::open(data.model(kQ8Model));
  // One model per dtype the core knows: bf16 and f16 are stories260K's values rounded.
  const Model bf16 = with_dtype(f32.model(), DType::bf16, 0, /*norms_too=*/true);
  const Model f16 = with_dtype(f32.model(), DType::f16, 0, /*norms_too=*/true);
  // GGUF's block types, as llama.cpp's tools wrote them (read in place).
  std::vector<gguf::GgufModel> blocks;
  for (const char* file : kGgufBlockModels) blocks.push_back(gguf::open_model(data.model(file)));
  std::vector<const Model*> models = {&f32.model(), &q8.model(), &bf16, &f16};
  for (const gguf::GgufModel& g : blocks) models.push_back(&g.model);
  const Model* usable = nullptr;
  for (const Model* m : models) {
    if (!usable && !unclaimed_dtype(*m, claimed)) usable = m;
  }
  CheckResult r;
  for (const Model* model : models) {
    const Model& m = *model;
    const std::optional<DType> missing = unclaimed_dtype(m, claimed);
    if (!missing) continue;
    const std::string what = m.source + " (" + m.weights.dtypes().to_string() + ")";
    auto backend = BackendRegistry::instance().create(spec);
    try {
      backend->prepare(m);
      r.fail(what + ": prepare accepted a model holding " + to_string(*missing) +
             ", which the backend does not claim");
      continue;
    } catch (const Error& e) {
      const std::string message = e.what();
      if (message.find('\n') != std::string::npos || !names_unclaimed_dtype(message, m, claimed)) {
        r.fail(what + ": the refusal is not one line naming an unclaimed dtype (" +
               to_string(*missing) + ", ...): " + message);
      }
    } catch (const std::exception& e) {
      r.fail(what + ": prepare threw something other than llama::Error: " + e.what());
      continue;
    }
    if (usable == nullptr) continue;
    try {
      backend->prepare(*usable);
      backend->forward(1, 0);
    } catch (const std::exception& e) {
      r.fail(what + ": after the refusal the backend does not run " + usable->source + ": " +
             e.what());
    }
  }
  return r;
}

// check_upcast_exact on a llama2.c shape and on one llama2.c files cannot hold
// (queries wider than dim).
CheckResult upcast_exact(const ConformanceData& data, const std::string& spec, DType dtype) {
  const Checkpoint s260 = Checkpoint::open(data.model("stories260K.bin"));
  const NamedConfig wide = variant_configs().front();
  return both(check_upcast_exact(spec, s260.model(), dtype),
              check_upcast_exact(spec, random_model(wide.config, 5, wide.name), dtype));
}

std::vector<SuiteCheck> make_checks() {
  using Data = const ConformanceData&;
  using Spec = const std::string&;
  const std::string shared = "stories260K.bin, rand-gqa.bin, mini32k.bin";
  const std::string shapes =
      "random checkpoints: multi-head, grouped-query, multi-query, separate classifier, odd "
      "sizes";
  return {
      {"registered", "", "the spec creates a backend", "1 and 2 threads",
       [](Data, Spec spec) {
         CheckResult r;
         for (int threads : {1, 2}) {
           BackendOptions o;
           o.threads = threads;
           if (BackendRegistry::instance().create(spec, o) == nullptr) r.fail("no backend");
         }
         return r;
       }},
      {"unclaimed-refused", "",
       "prepare refuses a model of a dtype the backend does not claim with one line",
       "stories260K.bin (f32), q-gqa.v2.bin (q8_0), stories260K.bin in bf16 and in f16, "
       "gguf/stories1M.{q8_0,q4_0}.gguf and gguf/rand-k.{q4_k_m,q6_k}.gguf (GGUF block types), "
       "each where a dtype is not claimed",
       [](Data data, Spec spec) { return check_unclaimed_refused(data, spec); }},
      {"f32/logits-shared", "f32", "logits match the reference backend within 1e-4",
       shared + ": 128 positions each",
       [](Data data, Spec spec) {
         return on_shared_models(data, [&](const Checkpoint& ck) {
           const int64_t n = std::min<int64_t>(ck.config().seq_len, kSharedPositions);
           return check_logits_match_reference(spec, ck.model(), test_tokens(ck.config(), n));
         });
       }},
      {"f32/logits-shapes", "f32", "logits match the reference backend within 1e-4",
       shapes + ": every position up to seq_len",
       [](Data data, Spec spec) {
         return on_shapes(data, [&](const Checkpoint& ck) {
           return check_logits_match_reference(spec, ck.model(),
                                               test_tokens(ck.config(), ck.config().seq_len));
         });
       }},
      {"f32/logits-variants", "f32", "logits match the reference backend within 1e-4",
       "in-memory models: head_dim above and below dim / n_heads, grouped-query heads, theta "
       "500000 with llama3 scaling, linear scaling, eps 1e-6; every position up to seq_len",
       [](Data, Spec spec) {
         return each(variant_configs(), [&](const NamedConfig& v) {
           const Model m = random_model(v.config, 99, v.name);
           return std::pair{v.name, check_logits_match_reference(
                                        spec, m, test_tokens(m.config, m.config.seq_len))};
         });
       }},
      {"f32/rotation-layouts", "f32",
       "q/k rows laid out for rotate_half give the interleaved model's logits within 1e-5",
       "the in-memory variant models, every position up to seq_len",
       [](Data, Spec spec) {
         return each(variant_configs(), [&](const NamedConfig& v) {
           return std::pair{v.name,
                            check_rotation_layouts_agree(spec, random_model(v.config, 7, v.name))};
         });
       }},
      {"f32/f16-kv-cache", "f32",
       "with an f16 KV cache (ggml's rounding points) logits match the reference backend's "
       "f16-cache logits within 1e-3, forward and forward_batch, nearer them than f32's",
       shared + " and the grouped-query shape: 64 positions each",
       [](Data data, Spec spec) {
         auto check = [&](const Checkpoint& ck) {
           const int64_t n = std::min<int64_t>(ck.config().seq_len, 64);
           return check_f16_kv_matches_reference(spec, ck.model(), test_tokens(ck.config(), n));
         };
         const Checkpoint gqa =
             Checkpoint::open(write_random_checkpoint(data, generated_shapes()[1], 1234));
         return both(on_shared_models(data, check), check(gqa));
       }},
      {"f32/streams", "f32", "generation reproduces run.c's streams token for token",
       "every case of parity.json, and its stop reason",
       [](Data data, Spec spec) {
         return reference_streams(data, spec, "parity.json", DType::f32, 3);
       }},
      {"f32/stories1M-streams", "f32",
       "generation reproduces run.c's streams of a trained model token for token",
       "every case of parity-stories1M.json (stories1M.bin, tok2048.bin), and its stop reason",
       [](Data data, Spec spec) {
         return reference_streams(data, spec, "parity-stories1M.json", DType::f32, 3);
       }},
      {"f32/prepare-again", "f32", "prepare again starts over, with the same or another model",
       "stories260K.bin and rand-gqa.bin; the first and last generated shapes",
       [](Data data, Spec spec) {
         const Checkpoint s260 = Checkpoint::open(data.model("stories260K.bin"));
         const Checkpoint gqa = Checkpoint::open(data.model("rand-gqa.bin"));
         const auto all = generated_shapes();
         const Checkpoint a = Checkpoint::open(write_random_checkpoint(data, all.front(), 1234));
         const Checkpoint b = Checkpoint::open(write_random_checkpoint(data, all.back(), 1234));
         return both(check_prepare_twice(spec, s260.model(), gqa.model()),
                     check_prepare_twice(spec, a.model(), b.model()));
       }},
      {"f32/batch", "f32", "forward_batch equals one forward per position", shared + "; " + shapes,
       [](Data data, Spec spec) {
         auto check = [&](const Checkpoint& ck) {
           return check_batch_matches_sequential(spec, ck.model());
         };
         return both(on_shared_models(data, check), on_shapes(data, check));
       }},
      {"f32/rewind", "f32",
       "a call at a position already run discards the cache from there (a fresh run's logits)",
       shared + "; " + shapes,
       [](Data data, Spec spec) {
         auto check = [&](const Checkpoint& ck) { return check_rewind(spec, ck.model()); };
         return both(on_shared_models(data, check), on_shapes(data, check));
       }},
      {"f32/bad-calls", "f32", "bad calls are a clean llama::Error and leave the backend usable",
       "forward before prepare, tokens -1 and vocab_size, position seq_len, a batch crossing "
       "seq_len; " +
           shapes,
       [](Data data, Spec spec) {
         return on_shapes(
             data, [&](const Checkpoint& ck) { return check_seq_len_bound(spec, ck.model()); });
       }},
      {"f32/threads", "f32", "1 thread and 2 threads give the same logits",
       shared + "; the grouped-query shape",
       [](Data data, Spec spec) {
         auto check = [&](const Checkpoint& ck) { return check_threads_agree(spec, ck.model()); };
         const Checkpoint gqa =
             Checkpoint::open(write_random_checkpoint(data, generated_shapes()[1], 1234));
         return both(on_shared_models(data, check), check(gqa));
       }},
      {"sequences/mixed", "f32",
       "several sequences in one call each get their logits alone (within 1e-4)",
       "4 sequences of stories260K.bin and of the grouped-query shape: prompt chunks of 1 to 7 "
       "tokens, rotating orders, logits all, last or none",
       [](Data data, Spec spec) {
         return on_stories_and_gqa(
             data, [&](const Model& m) { return check_sequences_match_alone(spec, m); });
       }},
      {"sequences/batch-invariant", "",
       "a sequence's logits are bit-identical whatever shares the call and however it is split",
       "the mixed schedule against each sequence alone as one run and one position per call, on "
       "each model where the prepared backend claims it: stories260K.bin (f32) in f32, bf16 and "
       "f16, the grouped-query shape, q-gqa.v2.bin (q8_0), gguf/stories1M.f16.gguf, "
       "gguf/stories1M.{q8_0,q4_0}.gguf, gguf/rand-k.{q4_k_m,q6_k}.gguf (f16 KV cache)",
       [](Data data, Spec spec) { return check_batch_invariant_models(data, spec); }},
      {"sequences/rewind", "f32",
       "a run below a sequence's length rewinds that sequence and no other",
       "stories260K.bin: sequence 1 back at position 3 beside the others' next tokens",
       [](Data data, Spec spec) {
         const Checkpoint s260 = Checkpoint::open(data.model("stories260K.bin"));
         return check_sequence_rewind(spec, s260.model());
       }},
      {"sequences/bad-calls", "f32",
       "bad runs are a clean llama::Error and leave every sequence usable",
       "no runs, ids 2 and -1 of 2, no tokens, a gap, a sequence twice, token vocab_size, "
       "past a context of 32; stories260K.bin",
       [](Data data, Spec spec) {
         const Checkpoint s260 = Checkpoint::open(data.model("stories260K.bin"));
         return check_sequence_bad_calls(spec, s260.model());
       }},
      {"sequences/memory", "f32",
       "sequences x context that do not fit are refused at prepare with one line",
       "4096 sequences of 10,000,000 positions refused, of 16 positions run; a context past "
       "seq_len refused",
       [](Data, Spec spec) { return check_sequence_memory(spec); }},
      {"q8_0/streams", "q8_0", "generation reproduces runq.c's int8 streams token for token",
       "every case of parity-q8.json (q-gqa.v2.bin), and its stop reason",
       [](Data data, Spec spec) {
         return reference_streams(data, spec, "parity-q8.json", DType::q8_0, 1);
       }},
      {"q8_0/logits", "q8_0", "logits match the reference backend within 1e-4",
       std::string(kQ8Model) + ": 128 positions",
       [](Data data, Spec spec) {
         const Checkpoint ck = Checkpoint::open(data.model(kQ8Model));
         return check_logits_match_reference(spec, ck.model(),
                                             test_tokens(ck.config(), kSharedPositions));
       }},
      {"q8_0/batch", "q8_0", "forward_batch equals one forward per position", kQ8Model,
       [](Data data, Spec spec) {
         const Checkpoint ck = Checkpoint::open(data.model(kQ8Model));
         return check_batch_matches_sequential(spec, ck.model());
       }},
      {"q8_0/rewind", "q8_0",
       "a call at a position already run discards the cache from there (a fresh run's logits)",
       kQ8Model,
       [](Data data, Spec spec) {
         const Checkpoint ck = Checkpoint::open(data.model(kQ8Model));
         return check_rewind(spec, ck.model());
       }},
      {"q8_0/prepare-again", "q8_0", "prepare again starts over, with the same or another model",
       std::string(kQ8Model) + " and itself",
       [](Data data, Spec spec) {
         const Checkpoint ck = Checkpoint::open(data.model(kQ8Model));
         return check_prepare_twice(spec, ck.model(), ck.model());
       }},
      {"q8_0/bad-calls", "q8_0", "bad calls are a clean llama::Error and leave the backend usable",
       kQ8Model,
       [](Data data, Spec spec) {
         const Checkpoint ck = Checkpoint::open(data.model(kQ8Model));
         return check_seq_len_bound(spec, ck.model());
       }},
      {"q8_0/threads", "q8_0", "1 thread and 2 threads give the same logits", kQ8Model,
       [](Data data, Spec spec) {
         const Checkpoint ck = Checkpoint::open(data.model(kQ8Model));
         return check_threads_agree(spec, ck.model());
       }},
      {"q8_0/logits-variants", "q8_0", "logits match the reference backend within 1e-4",
       "the in-memory variant models in q8_0 (groups of 16); every position up to seq_len",
       [](Data, Spec spec) {
         return each(variant_configs(), [&](const NamedConfig& v) {
           const Model m = with_dtype(random_model(v.config, 99, v.name), DType::q8_0, 16);
           return std::pair{v.name, check_logits_match_reference(
                                        spec, m, test_tokens(m.config, m.config.seq_len))};
         });
       }},
      {"bf16/upcast-exact", "bf16",
       "bf16 weights (exact numerics) give the f32 model of the same values within 1e-5 "
       "relative, forward and forward_batch",
       "stories260K.bin and the first variant model, matrices and norms in bf16; 12 positions",
       [](Data data, Spec spec) { return upcast_exact(data, spec, DType::bf16); }},
      {"f16/upcast-exact", "f16",
       "f16 weights (exact numerics) give the f32 model of the same values within 1e-5 "
       "relative, forward and forward_batch",
       "stories260K.bin and the first variant model, matrices and norms in f16; 12 positions",
       [](Data data, Spec spec) { return upcast_exact(data, spec, DType::f16); }},
  };
}

}  // namespace

const std::vector<SuiteCheck>& suite_checks() {
  static const std::vector<SuiteCheck> checks = make_checks();
  return checks;
}

const char* to_string(Outcome outcome) {
  switch (outcome) {
    case Outcome::passed:
      return "passed";
    case Outcome::failed:
      return "failed";
    case Outcome::not_claimed:
      return "not claimed";
  }
  return "?";
}

int SuiteReport::count(Outcome outcome) const {
  return static_cast<int>(std::count_if(
      checks.begin(), checks.end(), [&](const CheckOutcome& c) { return c.outcome == outcome; }));
}

bool is_check_id(const std::string& id) {
  const auto& all = suite_checks();
  return std::any_of(all.begin(), all.end(), [&](const SuiteCheck& c) { return c.id == id; });
}

SuiteReport run_suite(const ConformanceData& data, const std::string& spec,
                      const std::vector<std::string>& only,
                      const std::function<void(const CheckOutcome&)>& progress) {
  for (const std::string& id : only) {
    if (!is_check_id(id)) throw Error("no check '" + id + "'");
  }
  SuiteReport report{spec, claimed_dtypes(spec), {}};
  for (const SuiteCheck& check : suite_checks()) {
    if (!only.empty() && std::find(only.begin(), only.end(), check.id) == only.end()) continue;
    CheckOutcome outcome{&check, Outcome::passed, "", 0};
    const std::optional<DType> dtype = format_dtype(check.format);
    if (dtype && !report.claimed.contains(*dtype)) {
      outcome.outcome = Outcome::not_claimed;
      outcome.detail = spec + " runs " + report.claimed.to_string() + ", not " + check.format;
      report.checks.push_back(outcome);
      if (progress) progress(report.checks.back());
      continue;
    }
    const auto t0 = std::chrono::steady_clock::now();
    CheckResult r;
    try {
      r = check.run(data, spec);
    } catch (const std::exception& e) {
      r.fail(std::string("threw: ") + e.what());
    }
    outcome.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!r.ok) {
      outcome.outcome = Outcome::failed;
      outcome.detail = r.failure;
    } else if (!r.not_claimed.empty()) {
      outcome.outcome = Outcome::not_claimed;
      outcome.detail = r.not_claimed;
    }
    report.checks.push_back(outcome);
    if (progress) progress(report.checks.back());
  }
  return report;
}

}  // namespace llama::conformance
