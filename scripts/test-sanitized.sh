#!/usr/bin/env bash
# Builds everything with AddressSanitizer (leak detection on) and
# UndefinedBehaviorSanitizer (halt on the first report) into build-asan/ and
# runs the whole test suite there, then the out-of-tree tutorial against an install of
# that build (plugins dlopen'ed into sanitized programs). Extra arguments go to cmake.
# Without precompiled headers, so that CI compiles every source as written and a
# missing #include fails here (cmake/PrecompiledHeaders.cmake).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${LLAMA_ASAN_BUILD_DIR:-$root/build-asan}"
LLAMA_BUILD_DIR="$build" "$root/scripts/build.sh" -DLLAMA_SANITIZE=address,undefined \
  -DLLAMA_NATIVE=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_DISABLE_PRECOMPILE_HEADERS=ON "$@"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:strict_string_checks=1:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:${UBSAN_OPTIONS:-}"
ctest --test-dir "$build" --output-on-failure -j "$(nproc)"
LLAMA_BUILD_DIR="$build" "$root/scripts/sdk-tutorial.sh"
