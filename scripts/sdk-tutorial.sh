#!/usr/bin/env bash
# Runs docs/backends.md's out-of-tree tutorial exactly as written, as a user would:
# every ```sh block after a "<!-- tutorial -->" line, in order, in an empty directory,
# against a fresh install prefix. The blocks use
#   LLAMA_SRC    this source tree (the examples are copied out of it; nothing else is used)
#   LLAMA_BUILD  its build directory (LLAMA_BUILD_DIR, default build/)
#   PREFIX       a new temporary install prefix
#   WORK         a new temporary directory for the user's own projects
#   MODELS       the test models (LLAMA_MODELS_DIR, default ../shared/models)
#   REFERENCE    the reference cases (LLAMA_REFERENCE_DIR, default ../shared/reference)
# scripts/test.sh runs it after the tests; scripts/test-sanitized.sh with build-asan/.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export LLAMA_SRC="$root"
export LLAMA_BUILD="${LLAMA_BUILD_DIR:-$root/build}"
export MODELS="${LLAMA_MODELS_DIR:-$root/../shared/models}"
export REFERENCE="${LLAMA_REFERENCE_DIR:-$root/../shared/reference}"
PREFIX="$(mktemp -d /tmp/llama-sdk-prefix.XXXXXX)"
WORK="$(mktemp -d /tmp/llama-sdk-work.XXXXXX)"
export PREFIX WORK
trap 'rm -rf "$PREFIX" "$WORK"' EXIT

tutorial="$WORK/tutorial.sh"
awk '/^<!-- tutorial -->$/ { armed = 1; next }
     armed && /^```sh$/   { inside = 1; armed = 0; next }
     inside && /^```$/    { inside = 0; next }
     inside               { print }' "$root/docs/backends.md" >"$tutorial"
if [ ! -s "$tutorial" ]; then
  echo "sdk-tutorial: no tutorial blocks found in docs/backends.md" >&2
  exit 1
fi
log="$LLAMA_BUILD/sdk-tutorial.log"
mkdir -p "$LLAMA_BUILD"
cd "$WORK"
if bash -euxo pipefail "$tutorial" >"$log" 2>&1; then
  echo "sdk-tutorial: ok, $(grep -c '^+ ' "$log") commands (log: $log)"
else
  echo "sdk-tutorial: FAILED; the end of $log:" >&2
  tail -25 "$log" >&2
  exit 1
fi
