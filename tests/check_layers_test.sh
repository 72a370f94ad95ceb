#!/usr/bin/env bash
# scripts/check-layers.sh against small trees: it passes a tree whose includes point
# down and fails, naming the file, on an include going up, on a public header of no
# layer and on intrinsics outside kernels/x86.
set -euo pipefail
check="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/scripts/check-layers.sh"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# A tree with one file per layer, each including the layer below.
make_tree() {
  rm -rf "$tmp/t" && mkdir -p "$tmp/t" && cd "$tmp/t"
  git init -q .
  mkdir -p common/base common/kernels/steps common/kernels/x86 common/runtime \
    common/include/llama/kernels/steps
  printf '#include "llama/config.hpp"\n' > common/base/config.cpp
  printf '// config\n' > common/include/llama/config.hpp
  printf '#include "llama/config.hpp"\n' > common/include/llama/kernels/steps/run_c.hpp
  printf '#include "llama/kernels/steps/run_c.hpp"\n' > common/kernels/steps/run_c.cpp
  printf '#include <immintrin.h>\n__m512 f();\n' > common/kernels/x86/f.cpp
  printf '#include "llama/kernels/steps/run_c.hpp"\n#include "llama/config.hpp"\n' \
    > common/runtime/sampler.cpp
}
commit() { git add -A && git -c user.email=t@t -c user.name=t commit -qm t; }
expect_fail() {  # expect_fail WHAT PATTERN
  if out="$("$check" "$tmp/t" 2>&1)"; then
    echo "FAIL: $1: check-layers passed"; echo "$out"; exit 1
  fi
  grep -q -- "$2" <<<"$out" || { echo "FAIL: $1: no line matching '$2' in:"; echo "$out"; exit 1; }
  echo "ok: $1"
}

make_tree && commit
"$check" "$tmp/t" >/dev/null || { echo "FAIL: a tree pointing down was refused"; exit 1; }
echo "ok: includes pointing down pass"

make_tree
printf '#include "llama/sampler.hpp"\n' >> common/kernels/steps/run_c.cpp
printf '// sampler\n' > common/include/llama/sampler.hpp
commit
expect_fail "kernels including the runtime" \
  'common/kernels/steps/run_c.cpp (kernels) includes "llama/sampler.hpp" (runtime)'

make_tree
printf '#include "llama/kernels/steps/run_c.hpp"\n' >> common/base/config.cpp
commit
expect_fail "base including the kernels" 'common/base/config.cpp (base) includes'

make_tree
printf '// new\n' > common/include/llama/stranger.hpp
commit
expect_fail "a public header of no layer" 'common/include/llama/stranger.hpp: a public header of no layer'

make_tree
printf 'void g() { auto v = _mm256_setzero_ps(); }\n' >> common/runtime/sampler.cpp
commit
expect_fail "intrinsics in the runtime" 'common/runtime/sampler.cpp:3: x86 intrinsics outside'

make_tree
printf 'const char* e = getenv("LLAMA_X");\n' >> common/kernels/steps/run_c.cpp
commit
expect_fail "a kernel reading the environment outside dispatch/" \
  'common/kernels/steps/run_c.cpp:2: reads the environment or the CPU outside'
