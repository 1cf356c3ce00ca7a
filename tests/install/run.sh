#!/usr/bin/env bash
# Installs the build into a scratch prefix, then builds a consumer with
# find_package(spanscope) and one with pkg-config, and runs both; checks that
# the serial consumer loads no MPI library.  With MPIRUN (a build with MPI)
# the same for an MPI consumer: find_package(spanscope COMPONENTS mpi) and
# spanscope::spanscope_mpi, pkg-config spanscope_mpi, each run on 2 ranks.
#   run.sh BUILD [MPIRUN "MPI LIBRARIES"]
set -euo pipefail
build=$1
mpirun=${2:-}
mpilibs=${3:-}
src=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
mpi=OFF
[ -n "$mpirun" ] && mpi=ON
cmake -S "$src/consumer" -B "$tmp/cm" -DCMAKE_PREFIX_PATH="$tmp/prefix" -DCONSUMER_MPI=$mpi >/dev/null
cmake --build "$tmp/cm" >/dev/null
libdir=$(ls -d "$tmp"/prefix/lib*/pkgconfig | head -1)
libdir=$(dirname "$libdir")
export LD_LIBRARY_PATH="$libdir:${LD_LIBRARY_PATH:-}"
"$tmp/cm/consumer" "$tmp/a.h5" | grep -qx "calls 10"
export PKG_CONFIG_PATH="$libdir/pkgconfig"
cc "$src/consumer/main.c" -o "$tmp/pc" $(pkg-config --cflags --libs spanscope)
"$tmp/pc" "$tmp/b.h5" | grep -qx "calls 10"
test -s "$tmp/a.h5" && test -s "$tmp/b.h5"
# a serial program linked with spanscope loads no MPI library
for p in "$tmp/cm/consumer" "$tmp/pc"; do
  if ldd "$p" | grep -q libmpi; then
    echo "install consumer: $p loads libmpi:" >&2
    ldd "$p" | grep libmpi >&2
    exit 1
  fi
done
if [ "$mpi" = OFF ]; then
  echo "install consumer: find_package and pkg-config both work"
  exit 0
fi
# Open MPI: allow root (CI), no single-copy mechanism in containers
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader \
  OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_rmaps_base_oversubscribe=1 \
  OMPI_MCA_mpi_yield_when_idle=1
readelf -d "$tmp/cm/consumer_mpi" | grep -q 'NEEDED.*libspanscope_mpi' ||
  { echo "install consumer: consumer_mpi does not need libspanscope_mpi" >&2; exit 1; }
"$mpirun" -n 2 --oversubscribe "$tmp/cm/consumer_mpi" "$tmp/c.h5" | grep -qx "mpi session on 2 ranks"
# plain cc: spanscope_mpi.pc's Cflags carry MPI's include directories
cc "$src/consumer/main_mpi.c" -o "$tmp/pc_mpi" $(pkg-config --cflags --libs spanscope_mpi) $mpilibs
"$mpirun" -n 2 --oversubscribe "$tmp/pc_mpi" "$tmp/d.h5" | grep -qx "mpi session on 2 ranks"
test -s "$tmp/c.h5" && test -s "$tmp/d.h5"
echo "install consumer: find_package and pkg-config both work, spanscope_mpi included"
