#!/usr/bin/env bash
# What libspanscope.so (and libspanscope_mpi.so) export (docs/abi.md):
# - only sps_* names; of the internal sps__ names only the four the other
#   libraries and the header's inline functions call, every other sps__
#   symbol (hundreds, global in the objects) stays hidden;
# - every function and variable that spanscope.h (spanscope_mpi.h)
#   declares SPS_API, so the header promises nothing the library lacks;
# - the SONAME libspanscope.so.SOVERSION and, when the build used the
#   version script (VERSIONED=1), every symbol in node SPANSCOPE_SOVERSION.
#   exports.sh SOURCE_DIR LIBSPANSCOPE SOVERSION VERSIONED [LIBSPANSCOPE_MPI]
set -euo pipefail
src=$1 lib=$2 sover=$3 versioned=$4 mpilib=${5:-}
fail=0
node=SPANSCOPE_$sover
# the internal names other libraries of spanscope call (see docs/abi.md)
abi_internal="sps__active sps__begin sps__dist_register sps__end"

# names a header declares SPS_API (functions and extern variables)
declared() {
  grep -oE 'SPS_API [^;(]*\bsps_[a-z0-9_]+ *[(;]' "$1" | grep -oE 'sps_[a-z0-9_]+ *[(;]$' |
    tr -d ' (;' | sort -u
}
# defined dynamic symbols, without version suffixes or the version node
exported() {
  nm -D --defined-only "$1" | awk -v node="$node" '$3 != node {print $3}' | sed 's/@.*//' | sort -u
}

check_lib() {  # LIB HEADER PREFIX
  local l=$1 header=$2 prefix=$3 exp decl
  exp=$(exported "$l")
  [ -n "$exp" ] || { echo "abi: $l exports nothing" >&2; fail=1; return; }
  local bad
  bad=$(grep -vE "^$prefix" <<<"$exp" || true)
  if [ -n "$bad" ]; then
    echo "abi: $(basename "$l") exports names outside $prefix*:" >&2
    echo "$bad" >&2
    fail=1
  fi
  decl=$(declared "$header")
  local missing
  missing=$(comm -23 <(echo "$decl") <(echo "$exp"))
  if [ -n "$missing" ]; then
    echo "abi: $(basename "$header") declares, $(basename "$l") does not export:" >&2
    echo "$missing" >&2
    fail=1
  fi
  local soname
  soname=$(readelf -d "$l" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
  case $soname in
    *.so."$sover") ;;
    *) echo "abi: $(basename "$l"): SONAME '$soname', not .so.$sover" >&2; fail=1 ;;
  esac
  if [ "$versioned" = 1 ]; then
    local unversioned
    unversioned=$(nm -D --defined-only --with-symbol-versions "$l" |
      awk -v node="$node" '$3 != node && $3 !~ ("@@" node "$") {print $3}')
    if [ -n "$unversioned" ]; then
      echo "abi: $(basename "$l"): symbols not in version node $node:" >&2
      echo "$unversioned" >&2
      fail=1
    fi
  fi
}

check_lib "$lib" "$src/include/spanscope.h" '(sps|sp)_'
# scope-profiler's C API (include/scope_profiler.h, SP_API): all exported
sp_missing=$(comm -23 <(grep -oE 'SP_API [^;(]*\bsp_[a-z0-9_]+ *[(;]' "$src/include/scope_profiler.h" |
  grep -oE 'sp_[a-z0-9_]+ *[(;]$' | tr -d ' (;' | sort -u) <(exported "$lib"))
if [ -n "$sp_missing" ]; then
  echo "abi: scope_profiler.h declares, $(basename "$lib") does not export:" >&2
  echo "$sp_missing" >&2
  fail=1
fi
internal=$(exported "$lib" | grep '^sps__' | tr '\n' ' ' | sed 's/ $//')
if [ "$internal" != "$abi_internal" ]; then
  echo "abi: internal names exported: '$internal', expected '$abi_internal'" >&2
  fail=1
fi
# the hidden ones are there, global in the objects, and stay hidden
hidden=$(nm --defined-only -g "$(dirname "$lib")/libspanscope.a" 2>/dev/null |
  awk '$3 ~ /^sps__/ {print $3}' | sort -u | wc -l)
if [ "$hidden" -lt 10 ]; then
  echo "abi: only $hidden global sps__ symbols in libspanscope.a: the check above proves nothing" >&2
  fail=1
fi
if [ -n "$mpilib" ]; then
  check_lib "$mpilib" "$src/include/spanscope_mpi.h" sps_mpi_
fi
[ "$fail" = 0 ] || exit 1
echo "abi: $(exported "$lib" | wc -l) symbols exported, all sps_ or sp_; of the objects' $hidden global sps__ symbols only the 4 internal ABI names${mpilib:+; libspanscope_mpi: sps_mpi_ only}"
