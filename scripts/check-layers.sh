#!/usr/bin/env bash
# Fails when a lower layer of the library uses a higher one (DESIGN.md,
# "Layers"; docs/design.md):
#   util < core < model < formats < api < ext < faces
# (faces: scope-profiler's C API over the public one, src/faces/; it may use
# every layer below, and nothing below may use it)
# - symbols: reads the built objects with nm, and names every symbol an
#   object uses that a higher layer's object defines;
# - headers: a file under src/LAYER/ may include only headers of its own
#   layer or below, and never sps_int.h (the umbrella for tests and tools).
# Usage: scripts/check-layers.sh [BUILD_DIR [SOURCE_DIR]]
#   (defaults: build, and the directory above this script)
set -euo pipefail
build=${1:-build}
srcdir=${2:-$(cd "$(dirname "$0")/.." && pwd)}/src
objdir=$build/CMakeFiles/spanscope_objs.dir/src
[ -d "$objdir" ] || { echo "check-layers: no objects under $objdir (build first)" >&2; exit 2; }
layers=(util core model formats api ext faces)
declare -A rank def
for i in "${!layers[@]}"; do rank[${layers[$i]}]=$i; done
# every defined global symbol -> its layer
for l in "${layers[@]}"; do
  [ -d "$objdir/$l" ] || continue
  for o in "$objdir/$l"/*.o; do
    while read -r sym; do def[$sym]=$l; done < <(nm --defined-only -g "$o" | awk '{print $3}')
  done
done
bad=0
for l in "${layers[@]}"; do
  [ -d "$objdir/$l" ] || continue
  for o in "$objdir/$l"/*.o; do
    while read -r sym; do
      d=${def[$sym]:-}
      [ -n "$d" ] || continue
      if [ "${rank[$d]}" -gt "${rank[$l]}" ]; then
        echo "check-layers: $l/$(basename "$o" .o) uses $sym of $d" >&2
        bad=$((bad + 1))
      fi
    done < <(nm -u "$o" | awk '{print $2}')
  done
done
# headers: #include "LAYER/..." (or "sps_int.h") from a lower layer
if [ -d "$srcdir" ]; then
  for l in "${layers[@]}"; do
    [ -d "$srcdir/$l" ] || continue
    for f in "$srcdir/$l"/*.[ch]; do
      [ -e "$f" ] || continue
      while read -r inc; do
        if [ "$inc" = "sps_int.h" ]; then
          echo "check-layers: $l/$(basename "$f") includes sps_int.h (include your layer's header)" >&2
          bad=$((bad + 1)); continue
        fi
        d=${inc%%/*}
        [ "$d" != "$inc" ] && [ -n "${rank[$d]:-}" ] || continue
        if [ "${rank[$d]}" -gt "${rank[$l]}" ]; then
          echo "check-layers: $l/$(basename "$f") includes $inc of $d" >&2
          bad=$((bad + 1))
        fi
      done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
    done
  done
fi
n=$(find "$objdir" -name '*.o' | wc -l)
if [ "$bad" -gt 0 ]; then
  echo "check-layers: $bad upward uses ($n objects and the sources' includes)"
  exit 1
fi
echo "check-layers: $n objects and their sources: every layer uses only itself and those below"
