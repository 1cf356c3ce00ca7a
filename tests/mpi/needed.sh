#!/bin/sh
# needed.sh LIBSPANSCOPE LIBSPANSCOPE_MPI [READELF]
# Fails when libspanscope needs an MPI library, directly (NEEDED) or through
# another library (ldd): a serial program linked with spanscope must not load
# libmpi (docs/mpi.md, "What is loaded").  The same reading of
# libspanscope_mpi must find libmpi and libspanscope, so a check that no
# longer sees NEEDED entries fails instead of passing.
set -eu
core=$1
mpi=$2
readelf=${3:-readelf}
[ -n "$readelf" ] || readelf=readelf
fail() { echo "needed.sh: $*" >&2; exit 1; }
needed() { "$readelf" -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p'; }

core_needs=$(needed "$core")
mpi_needs=$(needed "$mpi")
echo "$mpi_needs" | grep -q '^libmpi' || fail "$mpi: no libmpi among NEEDED ($mpi_needs): the check reads nothing"
echo "$mpi_needs" | grep -q '^libspanscope\.so' || fail "$mpi: no libspanscope among NEEDED ($mpi_needs)"
echo "$core_needs" | grep -q '^libc\.so' || fail "$core: no libc among NEEDED ($core_needs): the check reads nothing"
if echo "$core_needs" | grep -q 'mpi'; then
  fail "$core NEEDs an MPI library: $(echo "$core_needs" | grep mpi | tr '\n' ' ')"
fi
loads=$(ldd "$core") || fail "ldd $core failed"
if echo "$loads" | grep -q 'libmpi'; then
  fail "$core loads libmpi through another library: $(echo "$loads" | grep libmpi)"
fi
echo "libspanscope needs no MPI library ($(echo "$loads" | wc -l) objects with its dependencies); libspanscope_mpi needs $(echo "$mpi_needs" | grep '^libmpi')"
