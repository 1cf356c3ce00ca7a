#!/usr/bin/env bash
# Fails when a lower layer of the library uses a symbol a higher layer
# defines (DESIGN.md, "Layers").  Reads the built objects with nm:
#   util < core < model < formats < api < ext
# Usage: scripts/check-layers.sh [BUILD_DIR]   (default: build)
set -euo pipefail
build=${1:-build}
objdir=$build/CMakeFiles/spanscope_objs.dir/src
[ -d "$objdir" ] || { echo "check-layers: no objects under $objdir (build first)" >&2; exit 2; }
layers=(util core model formats api ext)
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
n=$(find "$objdir" -name '*.o' | wc -l)
if [ "$bad" -gt 0 ]; then
  echo "check-layers: $bad upward uses in $n objects"
  exit 1
fi
echo "check-layers: $n objects, every layer uses only itself and those below"
