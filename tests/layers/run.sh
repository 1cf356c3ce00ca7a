#!/usr/bin/env bash
# The layer check (scripts/check-layers.sh) passes on this build and fails,
# naming the symbol, on objects where core uses a model function, and,
# naming the header, on a core source that includes the model's header.
# Usage: run.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1 build=$2
check=$src/scripts/check-layers.sh
bash "$check" "$build"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
d=$tmp/CMakeFiles/spanscope_objs.dir/src
mkdir -p "$d/core" "$d/model"
echo 'int sps__model_fn(void) { return 1; }' > "$tmp/m.c"
echo 'int sps__model_fn(void); int sps__core_fn(void) { return sps__model_fn(); }' > "$tmp/c.c"
cc -c "$tmp/m.c" -o "$d/model/m.c.o"
cc -c "$tmp/c.c" -o "$d/core/c.c.o"
if out=$(bash "$check" "$tmp" 2>&1); then
  echo "layers test: an upward use was not caught" >&2
  exit 1
fi
grep -q "core/c.c uses sps__model_fn of model" <<<"$out" || { echo "layers test: unexpected message: $out" >&2; exit 1; }
# a source of core that includes the model's header, against this build
mkdir -p "$tmp/tree/src/core" "$tmp/tree/src/model"
printf '#include "core/core.h"\n#include "model/model.h"\n' > "$tmp/tree/src/core/x.c"
if out=$(bash "$check" "$build" "$tmp/tree" 2>&1); then
  echo "layers test: an upward include was not caught" >&2
  exit 1
fi
grep -q "core/x.c includes model/model.h of model" <<<"$out" || { echo "layers test: unexpected message: $out" >&2; exit 1; }
echo "layers test: ok"
