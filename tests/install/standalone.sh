#!/usr/bin/env bash
# The library, the tool, the CMake package and the pkg-config files build
# and install with a compiler, CMake and HDF5 only (issue 14 part 1), in a
# second build of the source tree with cmocka hidden:
# 1. configured with the tests on, it succeeds and says once that the C
#    unit tests are skipped (no test_* target, the other tests still there);
# 2. configured with -DBUILD_TESTING=OFF (and no MPI, benchmarks or
#    examples), it builds nothing of the tests, builds and installs the
#    library, the tool, the CMake package and spanscope.pc;
# 3. tests/install/run.sh then uses that install as a user would (CMake and
#    pkg-config consumers, shared and static, no LD_LIBRARY_PATH).
#   standalone.sh SOURCE_DIR [JOBS]
set -euo pipefail
src=$(cd "$1" && pwd)
jobs=${2:-2}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
die() { echo "standalone: $*" >&2; exit 1; }
b=$tmp/build
# -O0, no debug info: the point is what builds and installs, not speed
common=(-DCMAKE_DISABLE_FIND_PACKAGE_cmocka=TRUE -DSPS_MPI=OFF -DSPS_BUILD_BENCH=OFF
  -DSPS_BUILD_EXAMPLES=OFF -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG=-O0)

# 1. tests on, cmocka hidden: one warning, no unit tests, a good configure
b1=$tmp/build-tests
cmake -S "$src" -B "$b1" "${common[@]}" -DBUILD_TESTING=ON >"$tmp/cfg1.out" 2>"$tmp/cfg1.err" ||
  die "configure with the tests on and cmocka hidden failed: $(cat "$tmp/cfg1.err")"
n=$(grep -c 'cmocka not found' "$tmp/cfg1.err" || true)
[ "$n" = 1 ] || die "configure with cmocka hidden: $n messages about cmocka, not 1: $(cat "$tmp/cfg1.err")"
grep -q 'test_core' "$b1/tests/c/CTestTestfile.cmake" 2>/dev/null &&
  die "cmocka hidden, yet the C unit tests were registered"
listed=$(cd "$b1" && ctest -N)
grep -q 'layers' <<<"$listed" || die "cmocka hidden: the other tests (layers) are gone: $listed"

# 2. BUILD_TESTING=OFF (a build directory of its own: CTest files of an
# earlier configure would stay): no tests at all; library, tool, package, .pc
cmake -S "$src" -B "$b" "${common[@]}" -DBUILD_TESTING=OFF >"$tmp/cfg2.out" 2>"$tmp/cfg2.err" ||
  die "configure with BUILD_TESTING=OFF failed: $(cat "$tmp/cfg2.err")"
grep -q 'cmocka not found' "$tmp/cfg2.err" && die "BUILD_TESTING=OFF still looks for cmocka: $(cat "$tmp/cfg2.err")"
cmake --build "$b" -j "$jobs" >"$tmp/build.out" 2>&1 || die "build failed: $(tail -30 "$tmp/build.out")"
tests=$(cd "$b" && ctest -N | sed -n 's/^Total Tests: //p')
[ "${tests:-0}" = 0 ] || die "BUILD_TESTING=OFF registered $tests tests"
built=$(find "$b" -name 'test_*' -type f -perm -u+x)
[ -z "$built" ] || die "BUILD_TESTING=OFF built test programs: $built"
cmake --install "$b" --prefix "$tmp/prefix" >/dev/null
for f in bin/spanscope include/spanscope.h; do
  [ -e "$tmp/prefix/$f" ] || die "not installed: $f"
done
lib=$(ls -d "$tmp"/prefix/lib*/pkgconfig | head -1)
lib=$(dirname "$lib")
for f in libspanscope.so.1 libspanscope.a pkgconfig/spanscope.pc cmake/spanscope/spanscopeConfig.cmake \
         cmake/spanscope/spanscopeTargets.cmake; do
  [ -e "$lib/$f" ] || die "not installed: ${lib#"$tmp"/prefix/}/$f"
done
[ -e "$lib/pkgconfig/spanscope_mpi.pc" ] && die "a build without MPI installed spanscope_mpi.pc"

# 3. used from outside
bash "$src/tests/install/run.sh" "$b"
echo "standalone: library, tool, CMake package and pkg-config build and install without cmocka or tests"
