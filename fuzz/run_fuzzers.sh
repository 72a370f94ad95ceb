#!/usr/bin/env bash
# Builds the libFuzzer targets with clang++-14 into build-fuzz/, writes the seed
# corpora and runs every target for a fixed time, $(nproc) at a time. Exits
# non-zero on any crash, leak, timeout or sanitizer report; the input is saved
# under build-fuzz/fuzz-artifacts/<target>/ (make it a test in
# tests/test_robustness_findings.cpp, then fix the code).
#   LLAMA_FUZZ_SECONDS=60 (per target)  LLAMA_FUZZ_BUILD_DIR=build-fuzz
#   fuzz/run_fuzzers.sh [target ...]    (default: all of them)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${LLAMA_FUZZ_BUILD_DIR:-$root/build-fuzz}"
seconds="${LLAMA_FUZZ_SECONDS:-60}"
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(checkpoint tokenizer_file bpe_encode tokenizer_json tokenizer_pipeline hf_encode cli_args chat_template gguf safetensors hf_config server_request load_stream)

cmake -S "$root" -B "$build" -DCMAKE_CXX_COMPILER=clang++-14 -DLLAMA_FUZZ=ON \
  -DBUILD_TESTING=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" --target llama_fuzzers -j "$(nproc)"

seeds="$build/fuzz-seeds"
rm -rf "$seeds"
"$build/bin/llama-fuzz-seeds" "$seeds"

# GGUF: room for a whole tiny llama model (tensors and a 260-token vocabulary).
max_len() { case "$1" in cli_args) echo 1024 ;; gguf) echo 262144 ;; *) echo 8192 ;; esac; }
# Seconds per input: tokenizer pipelines run within budgets of well under a second
# (bpe/limits.hpp), so one that takes longer is a finding.
timeout_of() { case "$1" in tokenizer_pipeline) echo 3 ;; *) echo 10 ;; esac; }

run_one() {
  local t="$1" corpus="$build/fuzz-corpus/$1" art="$build/fuzz-artifacts/$1/"
  mkdir -p "$corpus" "$art"
  if ASAN_OPTIONS="detect_leaks=1:${ASAN_OPTIONS:-}" UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1" \
    "$build/bin/fuzz_$t" -max_total_time="$seconds" -timeout="$(timeout_of "$t")" -rss_limit_mb=2048 \
    -max_len="$(max_len "$t")" -print_final_stats=1 -artifact_prefix="$art" \
    "$corpus" "$seeds/$t" >"$build/fuzz-$t.log" 2>&1; then
    echo "fuzz_$t: ok, $(grep -m1 -o 'Done [0-9]* runs in [0-9]* second(s)' "$build/fuzz-$t.log")"
  else
    echo "fuzz_$t: FAILED; log: $build/fuzz-$t.log, input: $(ls "$art" | head -1)" >&2
    grep -E 'ERROR|FUZZ_CHECK|SUMMARY' "$build/fuzz-$t.log" | head -5 >&2
    return 1
  fi
}

failed=0
running=0
for t in "${targets[@]}"; do
  run_one "$t" &
  running=$((running + 1))
  if [ "$running" -ge "$(nproc)" ]; then
    wait -n || failed=1
    running=$((running - 1))
  fi
done
while [ "$running" -gt 0 ]; do
  wait -n || failed=1
  running=$((running - 1))
done
exit "$failed"
