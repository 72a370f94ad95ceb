#!/usr/bin/env bash
# Installs the Debian packages the build and tests need, only when missing, then the
# npm packages of llama-server's end-to-end tests (tests/server, `npm ci`) when their
# node_modules is missing or older than the lockfile (LLAMA_DEPS_NPM=0: the Debian
# packages only, as scripts/quickstart.sh wants).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

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
# Extra tools for optional stages: LLAMA_DEPS_EXTRA="clang-14 libclang-rt-14-dev gnuplot-nox"
read -r -a extra <<< "${LLAMA_DEPS_EXTRA:-}"
packages+=("${extra[@]}")
# Node and npm for tests/server: the `node` on PATH when there is one (NodeSource's
# nodejs, which bundles npm, conflicts with Debian's npm package), else Debian's.
command -v node >/dev/null || packages+=(nodejs npm)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
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
fi

# The official openai client for tests/server, at its lockfile's versions. npm ci
# writes node_modules/.package-lock.json last: its age says whether the install is
# complete and current.
[ "${LLAMA_DEPS_NPM:-1}" = 0 ] && exit 0
server_tests="$root/tests/server"
installed="$server_tests/node_modules/.package-lock.json"
if [ ! -f "$installed" ] || [ "$server_tests/package-lock.json" -nt "$installed" ]; then
  command -v npm >/dev/null || { echo "install-deps: node is installed without npm; install npm for tests/server" >&2; exit 1; }
  echo "install-deps: npm ci in tests/server" >&2
  npm ci --prefix "$server_tests" --no-audit --no-fund >/tmp/llama-npm.log 2>&1 || {
    echo "install-deps: npm ci failed; see /tmp/llama-npm.log" >&2
    tail -5 /tmp/llama-npm.log >&2
    exit 1
  }
fi
