#!/usr/bin/env bash
# Fails on an include that points up the core's layers, on x86 intrinsics outside
# the kernels' x86 folders, or on a kernel outside dispatch/ reading the environment
# or the CPU's identity (docs/architecture.md, common/kernels/README.md).
#
# The core's layers, bottom up; a file may include its own layer and those below:
#   0 base      config, tensors, weights, numerics, errors, checked math, mapped files,
#               the model (common/base/ and those headers of llama/)
#   1 kernels   common/kernels/, llama/kernels/
#   2 io        checkpoint formats, tokenizers, the Jinja engine (common/{formats,tokenizers,chat}/)
#   3 runtime   sampler, KV cache, generation, perplexity, the backend protocol and
#               registry (common/runtime/ and those headers of llama/)
#   4 plugins   loading plugins (common/plugins/, llama/plugins/loader.hpp); what a plugin
#               writes (llama/plugins/plugin.hpp) is the backend protocol's, layer 3
# Backends, apps, bench and tests sit above the core and may include any of it.
# Usage: check-layers.sh [ROOT] (default: this repository); ROOT must be a git work tree.
set -euo pipefail
self="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")"
cd "${1:-$(dirname "$self")/..}"

base_headers="config tensor weights numerics error checked_math mapped_file memory_budget model uninitialized_array version"
runtime_headers="backend batch_generator cache_attention chat_session f32_weights generate kv_cache logprobs perplexity prompt_fit registry replay_sequences sampler sequence_runs stop_strings"

# The layer of a file (path from the repository root) or of an include ("llama/x.hpp",
# "kernels/..."); empty when it is not part of the core.
layer_of() {
  local p="$1" name
  case "$p" in
    common/base/* | common/include/llama/*) ;;
  esac
  p="${p#common/include/}"
  case "$p" in
    common/base/*) echo 0; return ;;
    common/kernels/* | kernels/* | llama/kernels/*) echo 1; return ;;
    common/formats/* | common/tokenizers/* | common/chat/* | llama/formats/* | \
      llama/tokenizers/* | llama/chat/* | formats/* | tokenizers/* | chat/*) echo 2; return ;;
    common/runtime/* | runtime/* | llama/plugins/plugin.hpp) echo 3; return ;;
    common/plugins/* | llama/plugins/* | plugins/*) echo 4; return ;;
    llama/*.hpp)
      name="${p#llama/}"; name="${name%.hpp}"
      case " $base_headers " in *" $name "*) echo 0; return ;; esac
      case " $runtime_headers " in *" $name "*) echo 3; return ;; esac
      echo "?"; return ;;
  esac
}

names=(base kernels io runtime plugins)
failed=0
while IFS= read -r file; do
  from="$(layer_of "$file")"
  [ -n "$from" ] || continue
  if [ "$from" = "?" ]; then
    echo "$file: a public header of no layer: add it to base_headers or runtime_headers in $self"
    failed=1
    continue
  fi
  dir="$(dirname "$file")"
  while IFS= read -r inc; do
    # A same-folder include ("lexer.hpp") is resolved against the including file.
    if [ -f "$dir/$inc" ]; then target="$dir/$inc"; else target="$inc"; fi
    to="$(layer_of "$target")"
    [ -n "$to" ] || continue
    if [ "$to" = "?" ]; then
      echo "$file: includes \"$inc\", a public header of no layer (add it in $self)"
      failed=1
    elif [ "$to" -gt "$from" ]; then
      echo "$file (${names[$from]}) includes \"$inc\" (${names[$to]}): an include going up"
      failed=1
    fi
  done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$file")
done < <(git ls-files 'common/*.cpp' 'common/*.hpp')

# x86 intrinsics and vector types only in the kernels' x86 folders.
intrinsics='_mm(256|512)?_[a-z]|__m(128|256|512)[di]?\b|__mmask|immintrin\.h'
while IFS= read -r hit; do
  echo "$hit: x86 intrinsics outside common/kernels/x86/ (move the kernel there)"
  failed=1
done < <(git ls-files 'common/*' 'backends/*' 'apps/*' 'examples/*' |
         grep -vE '^common/(kernels/x86|include/llama/kernels/x86)/' |
         grep -E '\.(cpp|hpp|h)$' | xargs grep -nE "$intrinsics" /dev/null |
         cut -d: -f1,2 | awk -F: '!seen[$1]++ {print}' || true)

# Inside the kernels only dispatch/ reads the environment or asks the CPU what it is;
# every other kernel follows its choices (simd_level(), the kernel set, the half path).
while IFS= read -r hit; do
  echo "$hit: reads the environment or the CPU outside common/kernels/dispatch/"
  failed=1
done < <(git ls-files 'common/kernels/*' 'common/include/llama/kernels/*' |
         grep -vE '^common/(kernels|include/llama/kernels)/dispatch/' |
         grep -E '\.(cpp|hpp|h)$' |
         xargs grep -nE 'getenv|__get_cpuid|__cpuid|_xgetbv|__builtin_cpu_(supports|init)|<cpuid\.h>' /dev/null |
         grep -vE ':[0-9]+:[[:space:]]*//' | cut -d: -f1,2 || true)

if [ "$failed" -ne 0 ]; then
  echo "check-layers: failed" >&2
  exit 1
fi
echo "check-layers: every include points down; intrinsics only in kernels/x86; CPU and environment read only in kernels/dispatch"
