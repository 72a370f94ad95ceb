#!/usr/bin/env bash
# The README's first command: install dependencies, build llama-cli, and generate text.
# Model: -c FILE if given, else $LLAMA_MODEL, else ../shared/models/stories1M.bin (a
# trained TinyStories model with its own tokenizer tok2048.bin: greedy decoding writes
# a story), else stories15M.bin downloaded from the public llama2.c locations.
# Without -k, the tokenizer beside the checkpoint. Any other arguments go to llama-cli.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# What the build needs only: the test-only packages and npm wait for scripts/test.sh.
LLAMA_DEPS_TESTS=0 "$root/scripts/install-deps.sh"
# Only llama-cli and the libraries it links: the tests, tools and examples wait for
# scripts/test.sh, so the first story comes in minutes.
"$root/scripts/build.sh" --target llama-cli

args=("$@")
has_checkpoint=0
has_tokenizer=0
for a in "${args[@]}"; do
  case "$a" in
    -c|--checkpoint|--checkpoint=*) has_checkpoint=1 ;;
    -k|--tokenizer|--tokenizer=*) has_tokenizer=1 ;;
  esac
done

if [ $has_checkpoint -eq 0 ]; then
  shared="$root/../shared/models"
  if [ -n "${LLAMA_MODEL:-}" ]; then
    model="$LLAMA_MODEL"
    tokenizer="$(dirname "$model")/tokenizer.bin"
  elif [ -f "$shared/stories1M.bin" ] && [ -f "$shared/tok2048.bin" ]; then
    model="$shared/stories1M.bin"
    tokenizer="$shared/tok2048.bin"
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
  [ $has_tokenizer -eq 0 ] && [ -f "$tokenizer" ] && args+=(-k "$tokenizer")
fi
exec "$root/build/bin/llama-cli" "${args[@]}"
