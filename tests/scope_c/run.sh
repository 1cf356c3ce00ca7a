#!/usr/bin/env bash
# scope-profiler's C, C++ and Fortran APIs over libspanscope (tests/scope_c):
#   run.sh SOURCE_DIR BUILD_DIR CASE [PROGRAM]
# CASE api: PROGRAM is test_api (test_api.c) ; example: PROGRAM is
# scope-profiler's example.c unchanged ; fortran: its example.f90 unchanged ;
# fortran_api: PROGRAM is test_fortran (test_fortran.f90) ;
# cxx: builds test_cxx.cpp and test_disabled.cpp here with c++ (the project
# is C only).  Each runs in a fresh directory; the files are then read by
# `spanscope report` and by check.py (h5py, scope-profiler's read_h5,
# read_trace, load_traces) with the venv's Python, else python3.
set -euo pipefail
src=$1 build=$2 case=$3 prog=${4:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
py=$src/.venv/bin/python
[ -x "$py" ] || py=python3
die() { echo "scope_c $case: $*" >&2; exit 1; }
cd "$tmp"
case $case in
  api)
    "$prog" >out.txt 2>err.txt || die "test_api failed: $(cat err.txt)"
    # the misuse checks print scope-profiler's messages
    grep -q "sp_end('plain') without a matching sp_begin" err.txt || die "no unmatched-end message"
    grep -q "region 'r' still open at sp_finalize" err.txt || die "no open-at-finalize message"
    # per-rank files of both writers merge: each says its own rank
    "$build/spanscope" merge -o merged.out.h5 ctx_a_rank00000.h5 ctx_b_rank00001.h5 \
      global_rank00003.h5 >/dev/null || die "spanscope merge of the rank files failed"
    # the whole report first: grep -q stops reading at its match, and the
    # report's SIGPIPE would fail the pipeline (pipefail)
    merged=$("$build/spanscope" report merged.out.h5) || die "spanscope report merged.out.h5 failed"
    grep -q "Per rank (3 ranks" <<<"$merged" ||
      die "the merged file does not hold 3 ranks: $(head -3 <<<"$merged")"
    ;;
  fortran_api)
    "$prog" >out.txt 2>err.txt || die "test_fortran failed: $(cat out.txt err.txt)"
    grep -q "test_fortran: all checks passed" out.txt || die "unexpected output: $(cat out.txt)"
    # every failing call there is given stat: nothing printed (scope-profiler's rule)
    [ ! -s err.txt ] || die "messages on stderr despite stat: $(cat err.txt)"
    ;;
  example|fortran)
    out=$("$prog" 2>&1) || die "the example failed: $out"
    grep -q "solve entered 20 time(s)" <<<"$out" || die "unexpected output: $out"
    ;;
  cxx)
    cxx=$(command -v c++ || command -v g++ || command -v clang++ || true)
    [ -n "$cxx" ] || { echo "scope_c cxx: no C++ compiler: skipped"; exit 77; }
    for t in test_cxx test_disabled; do
      "$cxx" -std=c++11 -Wall -Wextra -pedantic -Werror -I"$src/tests/scope_c/fake_mpi" \
        -I"$src/include" "$src/tests/scope_c/$t.cpp" -L"$build" -lspanscope \
        -Wl,-rpath,"$build" -o "$t" || die "$t does not compile"
    done
    ./test_cxx || die "test_cxx failed"
    ./test_disabled || die "test_disabled failed"
    if grep -q "disabled-region-that-must-not-survive" test_disabled; then
      die "SP_DISABLE_PROFILING left a region name in the program"
    fi
    ;;
  *) die "unknown case" ;;
esac
for f in *.h5; do
  "$build/spanscope" report "$f" >/dev/null || die "spanscope report $f failed"
done
if [ "$case" = example ] || [ "$case" = fortran ]; then
  rep=$("$build/spanscope" report profile_rank00000.h5) || die "spanscope report failed"
  grep -q "^solve  *20 " <<<"$rep" ||
    die "spanscope report: no solve with 20 calls"
fi
"$py" "$src/tests/scope_c/check.py" "$tmp" "$case"
