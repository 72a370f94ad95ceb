#!/usr/bin/env bash
# The README's second command: install what the tests need beyond the build (the
# test-only Debian packages and the npm clients: scripts/install-deps.sh, a no-op once
# done), check the core's layering (scripts/check-layers.sh), build (if needed), run
# every test through CTest, then the out-of-tree tutorial against an install of this
# build (scripts/sdk-tutorial.sh).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${LLAMA_BUILD_DIR:-$root/build}"
"$root/scripts/install-deps.sh"
"$root/scripts/check-layers.sh"
"$root/scripts/build.sh" "$@"
ctest --test-dir "$build" --output-on-failure -j "$(nproc)"
LLAMA_BUILD_DIR="$build" "$root/scripts/sdk-tutorial.sh"
