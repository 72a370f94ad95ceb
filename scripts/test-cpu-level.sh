#!/usr/bin/env bash
# Runs the whole test suite of an existing build (scripts/test.sh's) again with the
# kernels capped at a lower SIMD level (LLAMA_CPU_LEVEL, docs/architecture.md "CPU-feature
# dispatch"), as on a CPU without AVX-512: tests that expect the best path must expect
# what the capped CPU chooses. Usage: scripts/test-cpu-level.sh [avx2|portable ...]
# (default avx2).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${LLAMA_BUILD_DIR:-$root/build}"
[[ -f "$build/CTestTestfile.cmake" ]] || { echo "test-cpu-level: no build in $build (run scripts/test.sh first)" >&2; exit 2; }
for level in "${@:-avx2}"; do
  case "$level" in
    portable | avx2) ;;
    *) echo "test-cpu-level: '$level' is not a lower level (portable or avx2)" >&2; exit 2 ;;
  esac
  echo "== the suite at LLAMA_CPU_LEVEL=$level"
  LLAMA_CPU_LEVEL="$level" ctest --test-dir "$build" --output-on-failure -j "$(nproc)"
done
