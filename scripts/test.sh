#!/usr/bin/env bash
# The README's second command: build (if needed) and run every test through CTest.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${LLAMA_BUILD_DIR:-$root/build}"
"$root/scripts/build.sh" "$@"
ctest --test-dir "$build" --output-on-failure -j "$(nproc)"
