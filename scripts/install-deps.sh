#!/usr/bin/env bash
# Installs the Debian packages the build and tests need, only when missing, then the
# npm packages of the tests that drive a real client or browser (pinned by lockfiles),
# when a test directory's node_modules is missing or older than its lockfile.
# LLAMA_DEPS_TESTS=0: only what the build needs (scripts/quickstart.sh), without the
# test-only packages (nginx, chromium, systemd, Node) and npm.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
with_tests="${LLAMA_DEPS_TESTS:-1}"

packages=(
  build-essential cmake pkg-config
  ninja-build  # scripts/build.sh's generator (docs/building.md)
  libopenblas-dev libopenblas0-pthread
  libeigen3-dev libtbb-dev libboost-program-options-dev
  catch2 nlohmann-json3-dev
  libcpp-httplib-dev  # llama-server's HTTP (cpp-httplib 0.11.4 in Debian 12)
  libpcre2-dev  # tokenizer.json pre-tokenizer regexes (JIT)
  libdnnl-dev ocl-icd-opencl-dev  # oneDNN: bf16 prefill products (its config wants OpenCL)
  gnuplot-nox  # llama-bench --plot
)
if [ "$with_tests" != 0 ]; then
  packages+=(
    nginx  # the replica tests' balancer (tests/deploy, docs/deploy.md)
    systemd  # systemd-analyze verifies deploy/systemd's unit
    chromium  # the chat page's browser test (tests/browser), headless
  )
fi
# Extra tools for optional stages: LLAMA_DEPS_EXTRA="clang-14 libclang-rt-14-dev gnuplot-nox"
read -r -a extra <<< "${LLAMA_DEPS_EXTRA:-}"
packages+=("${extra[@]}")

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Node and npm: Debian's only when no node is on PATH (NodeSource's nodejs, which some
# machines have, conflicts with Debian's npm).
if [ "$with_tests" != 0 ] && ! command -v node >/dev/null; then missing+=(nodejs npm); fi

install_missing() {
  echo "install-deps: installing ${missing[*]}" >&2
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install ${missing[*]}" >&2; exit 1; }
    sudo="sudo"
  fi
  export DEBIAN_FRONTEND=noninteractive
  if ! $sudo apt-get install -y --no-install-recommends "${missing[@]}" >/tmp/llama-apt.log 2>&1; then
    $sudo apt-get update >/tmp/llama-apt-update.log 2>&1 || true
    $sudo apt-get install -y --no-install-recommends "${missing[@]}" >/tmp/llama-apt.log 2>&1 || {
      echo "install-deps: apt-get failed; see /tmp/llama-apt.log" >&2
      tail -5 /tmp/llama-apt.log >&2
      exit 1
    }
  fi
}
[ ${#missing[@]} -eq 0 ] || install_missing
[ "$with_tests" != 0 ] || exit 0

# Each npm test directory's packages, exactly as its lockfile says. npm ci writes
# node_modules/.package-lock.json last: its age says whether the install is complete
# and current.
for dir in tests/server tests/browser tests/deploy; do
  lock="$root/$dir/package-lock.json"
  installed="$root/$dir/node_modules/.package-lock.json"
  if [ ! -e "$installed" ] || [ "$lock" -nt "$installed" ]; then
    command -v npm >/dev/null || { echo "install-deps: node is installed without npm; install npm for $dir" >&2; exit 1; }
    echo "install-deps: npm ci in $dir" >&2
    npm ci --prefix "$root/$dir" --no-audit --no-fund >/tmp/llama-npm.log 2>&1 || {
      echo "install-deps: npm ci in $dir failed; see /tmp/llama-npm.log" >&2
      tail -5 /tmp/llama-npm.log >&2
      exit 1
    }
  fi
done
