#!/usr/bin/env bash
# The README's first command: install dependencies, build, and generate text.
# Model: -c FILE if given, else $LLAMA_MODEL, else ../shared/models/stories260K.bin,
# else stories15M.bin downloaded from the public llama2.c locations.
# Any other arguments are passed to llama-cli.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"

args=("$@")
has_checkpoint=0
for a in "${args[@]}"; do
  case "$a" in -c|--checkpoint|--checkpoint=*) has_checkpoint=1 ;; esac
done

if [ $has_checkpoint -eq 0 ]; then
  shared="$root/../shared/models"
  if [ -n "${LLAMA_MODEL:-}" ]; then
    model="$LLAMA_MODEL"
    tokenizer="$(dirname "$model")/tokenizer.bin"
  elif [ -f "$shared/stories260K.bin" ] && [ -f "$shared/tokenizer.bin" ]; then
    model="$shared/stories260K.bin"
    tokenizer="$shared/tokenizer.bin"
  else
    mkdir -p "$root/models"
    model="$root/models/stories15M.bin"
    tokenizer="$root/models/tokenizer.bin"
    fetch() {
      [ -s "$2" ] && return 0
      echo "quickstart: downloading $1" >&2
      if ! curl -fL --retry 2 -o "$2.part" "$1" 2>/dev/null; then
        rm -f "$2.part"
        echo "quickstart: cannot download $1 (no network?). Pass -c CHECKPOINT or set LLAMA_MODEL." >&2
        exit 1
      fi
      mv "$2.part" "$2"
    }
    fetch https://huggingface.co/karpathy/tinyllamas/resolve/main/stories15M.bin "$model"
    fetch https://github.com/karpathy/llama2.c/raw/master/tokenizer.bin "$tokenizer"
  fi
  args=(-c "$model" "${args[@]}")
  [ -f "$tokenizer" ] && args+=(-k "$tokenizer")
fi
exec "$root/build/bin/llama-cli" "${args[@]}"
