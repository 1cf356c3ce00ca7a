#!/usr/bin/env bash
# Installs a build into a scratch prefix and uses it as a user outside the
# tree would, with LD_LIBRARY_PATH unset throughout (the rpaths must do):
# - CMake find_package(spanscope): spanscope::spanscope (shared, run from
#   its build tree: CMake's build rpath) and spanscope::spanscope_static;
# - pkg-config: shared, with the README's -Wl,-rpath,$(pkg-config
#   --variable=libdir spanscope) (and without it the program cannot start:
#   the README says why the rpath is needed), and --static against a prefix
#   that has only the archives (Libs.private/Requires.private must suffice);
# - the installed tool, bin/spanscope, runs from the prefix;
# - the build tree, never installed: spanscope-uninstalled.pc
#   (PKG_CONFIG_PATH=BUILD) and -Dspanscope_DIR=BUILD;
# - a serial consumer loads no MPI library.
# With MPIRUN (a build with MPI) the same for an MPI consumer:
# find_package(spanscope COMPONENTS mpi) and spanscope::spanscope_mpi,
# pkg-config spanscope_mpi shared and --static, each run on 2 ranks.
# Without MPI: find_package(spanscope COMPONENTS mpi) fails, saying why.
#   run.sh BUILD [MPIRUN "MPI LIBRARIES"]
set -euo pipefail
unset LD_LIBRARY_PATH
build=$(cd "$1" && pwd)
mpirun=${2:-}
mpilibs=${3:-}
src=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
die() { echo "install consumer: $*" >&2; exit 1; }
# runs a consumer, which prints "calls 10" after recording 10 calls
runs() {  # PROGRAM OUT.h5 WHAT
  local out
  out=$("$1" "$2" 2>&1) || die "$3: $1 failed: $out"
  [ "$out" = "calls 10" ] || die "$3: $1 printed: $out"
  test -s "$2" || die "$3: $1 wrote no $2"
}
no_libspanscope_needed() {  # PROGRAM WHAT
  if readelf -d "$1" | grep -q 'NEEDED.*libspanscope'; then
    die "$2: $1 needs a shared libspanscope: $(readelf -d "$1" | grep NEEDED | tr -s ' ')"
  fi
}

prefix=$tmp/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null
pcdir=$(ls -d "$prefix"/lib*/pkgconfig | head -1)
libdir=$(dirname "$pcdir")
mpi=OFF
[ -n "$mpirun" ] && mpi=ON

# CMake, shared and static
cmake -S "$src/consumer" -B "$tmp/cm" -DCMAKE_PREFIX_PATH="$prefix" -DCONSUMER_MPI=$mpi >/dev/null
cmake --build "$tmp/cm" >/dev/null
runs "$tmp/cm/consumer" "$tmp/a.h5" "find_package, shared"
runs "$tmp/cm/consumer_static" "$tmp/a2.h5" "find_package, static"
no_libspanscope_needed "$tmp/cm/consumer_static" "find_package, static"

# pkg-config, shared: the rpath is what makes it start
export PKG_CONFIG_PATH=$pcdir
cc "$src/consumer/main.c" -o "$tmp/pc_norpath" $(pkg-config --cflags --libs spanscope)
deps=$(ldd "$tmp/pc_norpath" 2>&1 || true)
grep -q 'libspanscope.*not found' <<<"$deps" ||
  die "pkg-config without rpath: libspanscope resolved anyway (a copy in the system's directories?): $(grep libspanscope <<<"$deps")"
cc "$src/consumer/main.c" -o "$tmp/pc" $(pkg-config --cflags --libs spanscope) \
  -Wl,-rpath,"$(pkg-config --variable=libdir spanscope)"
runs "$tmp/pc" "$tmp/b.h5" "pkg-config, shared"
# scope-profiler's own example.c and example.f90 (tests/data, unchanged)
# against the install: pkg-config spanscope (spanscope_fortran) is all they need
data=$src/../data/scope-profiler-0.7.5
mkdir "$tmp/sp"
cc -std=c99 "$data/example.c" -o "$tmp/sp/example" $(pkg-config --cflags --libs spanscope) -lm \
  -Wl,-rpath,"$(pkg-config --variable=libdir spanscope)"
(cd "$tmp/sp" && ./example >/dev/null) || die "scope-profiler's example.c failed"
"$prefix/bin/spanscope" report "$tmp/sp/profile_rank00000.h5" | grep -q '^solve  *20 ' ||
  die "scope-profiler's example.c: no solve with 20 calls in its file"
if pkg-config --exists spanscope_fortran && command -v gfortran >/dev/null; then
  rm "$tmp/sp/profile_rank00000.h5"
  gfortran "$data/example.f90" -o "$tmp/sp/fexample" $(pkg-config --cflags --libs spanscope_fortran) \
    -Wl,-rpath,"$(pkg-config --variable=libdir spanscope)"
  (cd "$tmp/sp" && ./fexample >/dev/null) || die "scope-profiler's example.f90 failed"
  "$prefix/bin/spanscope" report "$tmp/sp/profile_rank00000.h5" | grep -q '^solve  *20 ' ||
    die "scope-profiler's example.f90: no solve with 20 calls in its file"
fi

# pkg-config --static, against the archives alone
cp -a "$prefix" "$tmp/static"
rm -f "$tmp"/static/lib*/libspanscope*.so*
export PKG_CONFIG_PATH=$tmp/static/${libdir#"$prefix"/}/pkgconfig
cc "$src/consumer/main.c" -o "$tmp/pc_static" $(pkg-config --static --cflags --libs spanscope)
no_libspanscope_needed "$tmp/pc_static" "pkg-config --static"
runs "$tmp/pc_static" "$tmp/b2.h5" "pkg-config --static"
export PKG_CONFIG_PATH=$pcdir

# the installed tool runs from the prefix and reads what the consumers wrote
out=$("$prefix/bin/spanscope" report "$tmp/b.h5" 2>&1) || die "installed spanscope report failed: $out"
grep -q 'consumer.loop' <<<"$out" || die "installed spanscope report: no consumer.loop in: $out"

# the build tree, not installed
PKG_CONFIG_PATH=$build cc "$src/consumer/main.c" -o "$tmp/bt_pc" \
  $(PKG_CONFIG_PATH=$build pkg-config --cflags --libs spanscope) \
  -Wl,-rpath,"$(PKG_CONFIG_PATH=$build pkg-config --variable=libdir spanscope)"
[ "$(PKG_CONFIG_PATH=$build pkg-config --variable=libdir spanscope)" = "$build" ] ||
  die "PKG_CONFIG_PATH=BUILD: pkg-config did not take spanscope-uninstalled.pc"
runs "$tmp/bt_pc" "$tmp/e.h5" "build tree, pkg-config"
cmake -S "$src/consumer" -B "$tmp/bt_cm" -Dspanscope_DIR="$build" -DCONSUMER_MPI=$mpi >/dev/null
cmake --build "$tmp/bt_cm" >/dev/null
runs "$tmp/bt_cm/consumer" "$tmp/f.h5" "build tree, find_package"

# a serial program linked with spanscope loads no MPI library
for p in "$tmp/cm/consumer" "$tmp/cm/consumer_static" "$tmp/pc" "$tmp/pc_static"; do
  deps=$(ldd "$p")
  if grep -q libmpi <<<"$deps"; then
    die "$p loads libmpi: $(grep libmpi <<<"$deps")"
  fi
done
if [ "$mpi" = OFF ]; then
  if out=$(cmake -S "$src/consumer" -B "$tmp/cm_mpi" -DCMAKE_PREFIX_PATH="$prefix" \
             -DCONSUMER_MPI=ON 2>&1); then
    die "find_package(spanscope COMPONENTS mpi) succeeded on a build without MPI"
  fi
  grep -q 'built without MPI' <<<"$out" ||
    die "find_package(spanscope COMPONENTS mpi) failed without saying why: $out"
  echo "install consumer: find_package (shared, static), pkg-config (shared with rpath, --static), the installed tool and the build tree all work; no MPI component"
  exit 0
fi
# Open MPI: allow root (CI), no single-copy mechanism in containers
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader \
  OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_rmaps_base_oversubscribe=1 \
  OMPI_MCA_mpi_yield_when_idle=1
mpiruns() {  # PROGRAM OUT.h5 WHAT
  local out
  out=$("$mpirun" -n 2 --oversubscribe "$1" "$2" 2>&1) || die "$3: $1 failed: $out"
  grep -qx "mpi session on 2 ranks" <<<"$out" || die "$3: $1 printed: $out"
  test -s "$2" || die "$3: $1 wrote no $2"
}
readelf -d "$tmp/cm/consumer_mpi" | grep -q 'NEEDED.*libspanscope_mpi' ||
  die "consumer_mpi does not need libspanscope_mpi"
mpiruns "$tmp/cm/consumer_mpi" "$tmp/c.h5" "find_package COMPONENTS mpi"
# plain cc: spanscope_mpi.pc's Cflags carry MPI's include directories
cc "$src/consumer/main_mpi.c" -o "$tmp/pc_mpi" $(pkg-config --cflags --libs spanscope_mpi) $mpilibs \
  -Wl,-rpath,"$(pkg-config --variable=libdir spanscope_mpi)"
mpiruns "$tmp/pc_mpi" "$tmp/d.h5" "pkg-config spanscope_mpi"
# --static: Libs.private brings MPI's library, Requires spanscope's archive
export PKG_CONFIG_PATH=$tmp/static/${libdir#"$prefix"/}/pkgconfig
cc "$src/consumer/main_mpi.c" -o "$tmp/pc_mpi_static" $(pkg-config --static --cflags --libs spanscope_mpi)
no_libspanscope_needed "$tmp/pc_mpi_static" "pkg-config --static spanscope_mpi"
mpiruns "$tmp/pc_mpi_static" "$tmp/d2.h5" "pkg-config --static spanscope_mpi"
echo "install consumer: find_package (shared, static), pkg-config (shared with rpath, --static), the installed tool and the build tree all work, spanscope_mpi included (shared and --static)"
