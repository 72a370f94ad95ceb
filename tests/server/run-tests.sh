#!/usr/bin/env bash
# CTest's llama_server_openai: the end-to-end tests with the official openai npm client
# (node --test on tests/server/*.test.mjs). Usage: run-tests.sh LLAMA_SERVER LLAMA_CLI MODELS_DIR
# The client comes from `npm ci` in this directory, which scripts/install-deps.sh runs.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[ $# -eq 3 ] || { echo "usage: $0 LLAMA_SERVER LLAMA_CLI MODELS_DIR" >&2; exit 2; }
command -v node >/dev/null || { echo "llama_server_openai: node is not installed: run scripts/install-deps.sh" >&2; exit 1; }
# The openai client documents Node 20 and later; node --test-concurrency came in 20.10.
node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 20 || (a === 20 && b >= 10) ? 0 : 1)' ||
  { echo "llama_server_openai: node $(node --version) is older than the 20.10 these tests need" >&2; exit 1; }
installed="$here/node_modules/.package-lock.json"
if [ ! -f "$installed" ]; then
  echo "llama_server_openai: tests/server/node_modules is missing: run scripts/install-deps.sh (it runs npm ci there)" >&2
  exit 1
fi
if [ "$here/package-lock.json" -nt "$installed" ]; then
  echo "llama_server_openai: tests/server/node_modules is older than package-lock.json: run scripts/install-deps.sh" >&2
  exit 1
fi
for model in stories1M.bin tok2048.bin; do
  [ -f "$3/$model" ] || { echo "llama_server_openai: $3/$model is missing (LLAMA_MODELS_DIR; see ../shared/models/README.md)" >&2; exit 1; }
done
export LLAMA_SERVER="$1" LLAMA_CLI="$2" LLAMA_MODELS_DIR="$3"
cd "$here"
# The files run side by side: each waits mostly on its own servers (and on their
# shutdown, which waits out the SDK's idle keep-alive connections).
exec node --test --test-reporter=spec --test-concurrency=4 ./*.test.mjs
