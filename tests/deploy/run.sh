#!/usr/bin/env bash
# CTest's deploy tests (docs/deploy.md): run.sh TEST_FILE, with LLAMA_SERVER,
# LLAMA_MODELS_DIR, LLAMA_TEST_PACED_PLUGIN and LLAMA_SOURCE_DIR set by CTest. The npm
# packages come from `npm ci` here and nginx from Debian, both by scripts/install-deps.sh.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[ $# -eq 1 ] || { echo "usage: $0 TEST_FILE" >&2; exit 2; }
command -v node >/dev/null || { echo "deploy tests: node is not installed: run scripts/install-deps.sh" >&2; exit 1; }
installed="$here/node_modules/.package-lock.json"
if [ ! -f "$installed" ] || [ "$here/package-lock.json" -nt "$installed" ]; then
  echo "deploy tests: tests/deploy/node_modules is missing or older than its lockfile: run scripts/install-deps.sh" >&2
  exit 1
fi
exec node --test --test-reporter=spec "$here/$1"
