#!/usr/bin/env bash
# deploy/systemd/llama-server.service against systemd-analyze verify, with the built
# llama-server as its ExecStart: any unknown key, bad value or missing binary is output
# (verify exits 0 on warnings), so the test fails on any output at all.
set -euo pipefail
unit="$1"
server="$2"
command -v systemd-analyze >/dev/null ||
  { echo "systemd-analyze not found (package systemd; scripts/install-deps.sh installs it)"; exit 1; }
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
sed "s#/usr/local/bin/llama-server#${server}#" "$unit" >"$dir/llama-server.service"
grep -q "ExecStart=${server} " "$dir/llama-server.service" ||
  { echo "$unit: ExecStart does not run /usr/local/bin/llama-server"; exit 1; }
if ! out="$(systemd-analyze verify "$dir/llama-server.service" 2>&1)" || [ -n "$out" ]; then
  echo "systemd-analyze verify $unit:"
  echo "$out"
  exit 1
fi
echo "systemd-analyze verify: $unit ok"
