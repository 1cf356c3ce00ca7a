#!/usr/bin/env bash
# LIKWID-annotated programs over spanscope (tests/likwid):
#   run.sh SOURCE_DIR BUILD_DIR markers PROGRAM   (markers.c, built by CMake)
#   run.sh SOURCE_DIR BUILD_DIR env PROGRAM       (markers.c: INIT's session
#                                                  from the environment)
#   run.sh SOURCE_DIR BUILD_DIR example           (LIKWID's C-markerAPI.c)
# Each runs in a fresh directory with SPANSCOPE_OUTPUT set; the file the
# marker CLOSE wrote is then read by `spanscope report` (spanscope's C
# reader): its regions must be exactly the tags, with exact call counts.
set -euo pipefail
src=$1 build=$2 case=$3 prog=${4:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
die() { echo "likwid $case: $*" >&2; exit 1; }
cd "$tmp"
case $case in
  markers)
    SPANSCOPE_OUTPUT=likwid.h5 "$prog" >out.txt 2>err.txt ||
      die "markers failed: $(cat out.txt err.txt)"
    grep -q "markers: all checks passed" out.txt || die "unexpected output: $(cat out.txt)"
    # LIKWID's own messages for the misuse cases
    grep -q "WARN: Stopping an unknown/not-started region never" err.txt ||
      die "no warning for STOP without START: $(cat err.txt)"
    grep -q "WARN: Region twice was already started" err.txt || die "no double-start warning"
    grep -q "ERROR: Can only reset stopped regions" err.txt || die "no reset warning"
    # 5 outer, 2 inner in each, 4 threads x 7 worker calls, the double START
    # counted once, RESET leaving the profile whole; nothing for "never"
    expected="inner 10
outer 5
reset_me 3
twice 1
unregistered 1
worker 28"
    ;;
  env)  # INIT's session from the environment (sps_setup_from_env)
    "$prog" >out.txt 2>err.txt || die "markers failed: $(cat out.txt err.txt)"
    [ -f spanscope_likwid.h5 ] || die "no SPANSCOPE_OUTPUT: spanscope_likwid.h5 not written"
    mv spanscope_likwid.h5 likwid.h5
    # deactivated: the markers answer (the checks pass), nothing is written
    SPANSCOPE_DEACTIVATE_PROFILING=1 SPANSCOPE_OUTPUT=off.h5 "$prog" >out2.txt 2>&1 ||
      die "deactivated run failed: $(cat out2.txt)"
    [ ! -e off.h5 ] || die "SPANSCOPE_DEACTIVATE_PROFILING=1 wrote a file"
    # a bad variable: one line, the program runs unprofiled
    SPANSCOPE_MEMORY_LIMIT=lots SPANSCOPE_OUTPUT=bad.h5 "$prog" >out3.txt 2>err3.txt ||
      die "a bad variable broke the program: $(cat out3.txt err3.txt)"
    grep -q "spanscope likwid: .*SPANSCOPE_MEMORY_LIMIT" err3.txt ||
      die "no message for a bad variable: $(cat err3.txt)"
    [ ! -e bad.h5 ] || die "a bad variable still profiled"
    expected="inner 10
outer 5
reset_me 3
twice 1
unregistered 1
worker 28"
    ;;
  example)
    ex=/usr/share/likwid/examples/C-markerAPI.c
    [ -f "$ex" ] || { echo "likwid example: $ex not installed (Debian likwid): skipped"; exit 77; }
    cc=$(command -v cc || command -v gcc || true)
    [ -n "$cc" ] || { echo "likwid example: no C compiler: skipped"; exit 77; }
    # LIKWID's build line, with spanscope's include/likwid and library
    "$cc" -fopenmp -DLIKWID_PERFMON -I"$src/include/likwid" "$ex" -L"$build" -lspanscope \
      -Wl,-rpath,"$build" -o example 2>cc.txt ||
      { echo "likwid example: no OpenMP ($(head -1 cc.txt)): skipped"; exit 77; }
    # 10 rounds of 2 s on 2 threads: 20 calls of "example"
    OMP_NUM_THREADS=2 SPANSCOPE_OUTPUT=likwid.h5 ./example >out.txt 2>err.txt ||
      die "the example failed: $(cat out.txt err.txt)"
    expected="example 20"
    ;;
  *) die "unknown case" ;;
esac
[ -f likwid.h5 ] || die "CLOSE wrote no file"
"$build/spanscope" report likwid.h5 >report.txt || die "spanscope report failed"
# the "Regions (by self ...)" table: name and calls of every region
got=$(awk '/^Regions \(by self/ {on=1; next} on && /^---/ {n++; next}
           on && n == 1 && NF > 1 {print $1, $2} on && n == 2 {exit}' report.txt | sort)
[ "$got" = "$expected" ] || die "regions and calls in likwid.h5:
$got
expected:
$expected
$(cat report.txt)"
if [ "$case" != example ]; then  # inner nests in outer (the call tree)
  grep -A1 -E '^outer ' report.txt | grep -qE '^  inner +10 ' || die "inner is not under outer"
fi
echo "likwid $case: $(tr '\n' ' ' <<<"$got")"
