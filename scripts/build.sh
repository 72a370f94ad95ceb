#!/usr/bin/env bash
# Configures and builds into build/ (Release): every target, or only those named
# with --target NAME (as many as wanted). Other arguments go to cmake's configure.
# A new build directory uses Ninja where it is installed (install-deps.sh installs
# it): it schedules every source of every target as soon as it can be compiled, where
# CMake's Makefiles wait target by target (docs/building.md); an existing directory
# keeps its generator.
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
generator=()
if [ ! -f "$build/CMakeCache.txt" ] && command -v ninja >/dev/null; then
  case " ${configure[*]} " in
    *" -G"*) ;;
    *) generator=(-G Ninja) ;;
  esac
fi
cmake -S "$root" -B "$build" "${generator[@]}" "${configure[@]}" >/dev/null
cmake --build "$build" -j "$(nproc)" "${targets[@]}"
