#!/usr/bin/env bash
# Configures and builds into build/ (Release): every target, or only those named
# with --target NAME (as many as wanted). Other arguments go to cmake's configure.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${LLAMA_BUILD_DIR:-$root/build}"
configure=()
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --target)
      [ $# -ge 2 ] || { echo "build.sh: --target needs a target name" >&2; exit 2; }
      targets+=(--target "$2")
      shift 2
      ;;
    --target=*) targets+=(--target "${1#--target=}"); shift ;;
    *) configure+=("$1"); shift ;;
  esac
done
cmake -S "$root" -B "$build" "${configure[@]}" >/dev/null
cmake --build "$build" -j "$(nproc)" "${targets[@]}"
