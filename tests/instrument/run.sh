#!/usr/bin/env bash
# tests/instrument/run.sh -- libspanscope_instrument on programs built with
# -finstrument-functions (docs/instrument.md).  Builds prog.c (with its own
# shared library libtlib.so linked, libtplug.so dlopen'ed), own.c, cxx.cpp
# and fort.f90 with each compiler it finds (CC; clang, g++, clang++,
# gfortran when there), at -O0 and -O2, runs them with the library linked
# and LD_PRELOADed, and compares what inst_counts reads back from each
# recording -- every function's exact call count, name and parent, and the
# file's misuse count -- with the expected lists below.  Also: run-time
# include/exclude patterns, GCC's compile-time exclusion lists, "%p" in
# SPANSCOPE_OUTPUT, the default file name, no file for an uninstrumented
# child or a deactivated run, a bad setting told on stderr, and a program
# that opens its own session (SPANSCOPE_INSTRUMENT_SETUP=0).
#
#   run.sh SRC_DIR LIBSPANSCOPE_INSTRUMENT INST_COUNTS CC
set -euo pipefail
src=$1 cc=$4
libdir=$(cd "$(dirname "$2")" && pwd)
lib=$libdir/$(basename "$2")
ic=$(cd "$(dirname "$3")" && pwd)/$(basename "$3")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sps-instrument.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fails=0
checks=0
unset SPANSCOPE_OUTPUT SPANSCOPE_INSTRUMENT_INCLUDE SPANSCOPE_INSTRUMENT_EXCLUDE \
      SPANSCOPE_DEACTIVATE_PROFILING SPANSCOPE_INSTRUMENT_SETUP SPANSCOPE_CONFIG || true

fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

# same WHAT EXPECTED ACTUAL: the two texts are equal (a diff otherwise)
same() {
  checks=$((checks + 1))
  if [ "$2" != "$3" ]; then
    fail "$1"
    diff <(printf '%s\n' "$2") <(printf '%s\n' "$3") >&2 || true
  fi
}

# read H5 [count|parent|misuse]: inst_counts' lines of that kind, sorted
read_h5() {
  "$ic" "$1" > "$1.txt" || { fail "inst_counts $1"; return 0; }
  grep "^$2	" "$1.txt" | LC_ALL=C sort || true
}

T=$'\t'
# the library exports the two hooks and nothing else
if command -v nm >/dev/null 2>&1; then
  same "exports" "$(printf '__cyg_profile_func_enter\n__cyg_profile_func_exit')" \
    "$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TtWwDdBbVvi]$/ {print $3}' | sed 's/@.*//' | LC_ALL=C sort)"
fi
# every function of prog, its calls (fib: fib(10) 177 + fib(5) 15)
prog_counts=$(LC_ALL=C sort <<EOF
count${T}add1${T}5
count${T}after${T}1
count${T}apply${T}10
count${T}deep1${T}1
count${T}deep2${T}1
count${T}down${T}1001
count${T}fib${T}192
count${T}helper${T}4
count${T}jumper${T}1
count${T}lj_inner${T}1
count${T}lj_mid${T}1
count${T}lj_top${T}1
count${T}main${T}1
count${T}mul2${T}5
count${T}plug_run${T}1
count${T}plug_step${T}2
count${T}skipme_a${T}7
count${T}skipme_b${T}7
count${T}tlib_inner${T}3
count${T}tlib_work${T}1
count${T}worker${T}1
EOF
)
# and their parents: after() is jumper()'s child although deep1/deep2
# were left by a longjmp; the second thread's worker is a root
prog_parents=$(LC_ALL=C sort <<EOF
parent${T}add1${T}apply${T}5
parent${T}after${T}jumper${T}1
parent${T}apply${T}main${T}10
parent${T}deep1${T}jumper${T}1
parent${T}deep2${T}deep1${T}1
parent${T}down${T}down${T}1000
parent${T}down${T}main${T}1
parent${T}fib${T}fib${T}190
parent${T}fib${T}main${T}1
parent${T}fib${T}worker${T}1
parent${T}helper${T}main${T}4
parent${T}jumper${T}main${T}1
parent${T}lj_inner${T}lj_mid${T}1
parent${T}lj_mid${T}lj_top${T}1
parent${T}lj_top${T}main${T}1
parent${T}main${T}-${T}1
parent${T}mul2${T}apply${T}5
parent${T}plug_run${T}main${T}1
parent${T}plug_step${T}plug_run${T}2
parent${T}skipme_a${T}skipme_b${T}7
parent${T}skipme_b${T}main${T}7
parent${T}tlib_inner${T}tlib_work${T}3
parent${T}tlib_work${T}main${T}1
parent${T}worker${T}-${T}1
EOF
)

ccs=("$cc")
if command -v clang >/dev/null 2>&1 && [ "$(basename "$cc")" != clang ]; then ccs+=(clang); fi
first=1
for c in "${ccs[@]}"; do
  for opt in -O0 -O2; do
    d="$tmp/$(basename "$c")$opt"
    mkdir -p "$d"
    $c $opt -fPIC -shared -finstrument-functions "$src/tlib.c" -o "$d/libtlib.so"
    $c $opt -fPIC -shared -finstrument-functions "$src/tplug.c" -o "$d/libtplug.so"
    # linked: -lspanscope_instrument before libc; and plain, for LD_PRELOAD
    $c $opt -finstrument-functions "$src/prog.c" -o "$d/prog_linked" -L"$d" -ltlib \
      -Wl,-rpath,"$d" -L"$libdir" -lspanscope_instrument -Wl,-rpath,"$libdir" -lpthread -ldl
    $c $opt -finstrument-functions "$src/prog.c" -o "$d/prog" -L"$d" -ltlib \
      -Wl,-rpath,"$d" -lpthread -ldl
    SPANSCOPE_OUTPUT="$d/linked.h5" "$d/prog_linked" "$d/libtplug.so" > /dev/null ||
      fail "$c $opt: prog_linked exited $?"
    SPANSCOPE_OUTPUT="$d/preload.h5" LD_PRELOAD="$lib" "$d/prog" "$d/libtplug.so" > /dev/null ||
      fail "$c $opt: prog under LD_PRELOAD exited $?"
    for how in linked preload; do
      same "$c $opt $how: counts" "$prog_counts" "$(read_h5 "$d/$how.h5" count)"
      same "$c $opt $how: parents" "$prog_parents" "$(read_h5 "$d/$how.h5" parent)"
      same "$c $opt $how: misuse" "misuse${T}0" "$(read_h5 "$d/$how.h5" misuse)"
    done
    [ $first = 1 ] || continue
    first=0
    # run-time patterns: by name and by object ('@'); spaces around them
    SPANSCOPE_INSTRUMENT_EXCLUDE='skipme_*, @*libtplug*' SPANSCOPE_OUTPUT="$d/ex.h5" \
      "$d/prog_linked" "$d/libtplug.so" > /dev/null
    same "exclude patterns" "$(grep -v 'skipme_\|plug_' <<< "$prog_counts")" \
      "$(read_h5 "$d/ex.h5" count)"
    same "exclude patterns: no parent left out" \
      "$(grep -v 'skipme_\|plug_' <<< "$prog_parents")" "$(read_h5 "$d/ex.h5" parent)"
    SPANSCOPE_INSTRUMENT_INCLUDE='fib,do*' SPANSCOPE_INSTRUMENT_EXCLUDE='dow?' \
      SPANSCOPE_OUTPUT="$d/in.h5" "$d/prog_linked" "$d/libtplug.so" > /dev/null
    same "include patterns (exclude wins)" "count${T}fib${T}192" "$(read_h5 "$d/in.h5" count)"
    # "%p": the process id
    (cd "$d"; SPANSCOPE_OUTPUT='pid-%p.h5' ./prog_linked ./libtplug.so > /dev/null &
     pid=$!; wait $pid; n=$(ls pid-*.h5 | wc -l); [ "$n" = 1 ] && [ -e "pid-$pid.h5" ]) ||
      fail "SPANSCOPE_OUTPUT with %p: no pid-<pid>.h5"
    checks=$((checks + 1))
    # the default name, in the working directory
    (cd "$d" && ./prog_linked ./libtplug.so > /dev/null)
    same "default file: counts" "$prog_counts" "$(read_h5 "$d/spanscope_instrument.h5" count)"
    # no file: a child with nothing instrumented, a deactivated run
    (cd "$d" && SPANSCOPE_OUTPUT=true.h5 LD_PRELOAD="$lib" /bin/true)
    [ ! -e "$d/true.h5" ] || fail "an uninstrumented program wrote a file"
    (cd "$d" && SPANSCOPE_OUTPUT=off.h5 SPANSCOPE_DEACTIVATE_PROFILING=1 ./prog_linked \
       ./libtplug.so > /dev/null)
    [ ! -e "$d/off.h5" ] || fail "SPANSCOPE_DEACTIVATE_PROFILING=1 wrote a file"
    # a bad setting: one line on stderr, the program runs, no file
    msg=$(cd "$d" && SPANSCOPE_OUTPUT=bad.h5 SPANSCOPE_MEMORY_LIMIT=lots ./prog_linked \
            ./libtplug.so 2>&1 >/dev/null) || fail "a bad setting stopped the program"
    same "a bad setting's message" \
      "spanscope_instrument: SPANSCOPE_MEMORY_LIMIT=lots: expected a whole number of bytes; not profiling" \
      "$msg"
    [ ! -e "$d/bad.h5" ] || fail "a bad setting still wrote a file"
    checks=$((checks + 3))
    # the program's own session
    $c $opt -finstrument-functions -I"$src/../../include" "$src/own.c" -o "$d/own" \
      -L"$libdir" -lspanscope_instrument -lspanscope -Wl,-rpath,"$libdir"
    SPANSCOPE_INSTRUMENT_SETUP=0 "$d/own" "$d/own.h5" > /dev/null || fail "own exited $?"
    same "a session of the program's own, paused in a recursion" \
      "$(printf 'count\trec\t3\ncount\twork\t6')" "$(read_h5 "$d/own.h5" count)"
    same "a session of the program's own: parents" \
      "$(printf 'parent\trec\t-\t1\nparent\trec\trec\t2\nparent\twork\t-\t6')" \
      "$(read_h5 "$d/own.h5" parent)"
    same "a session of the program's own: misuse" "misuse${T}0" "$(read_h5 "$d/own.h5" misuse)"
    # statistics only (aggregate mode), and the table on stderr
    tbl=$(SPANSCOPE_OUTPUT="$d/agg.h5" SPANSCOPE_AGGREGATION_MODE=1 SPANSCOPE_INSTRUMENT_VERBOSE=1 \
            "$d/prog_linked" "$d/libtplug.so" 2>&1 >/dev/null)
    same "aggregate mode: counts" "$prog_counts" "$(read_h5 "$d/agg.h5" count)"
    checks=$((checks + 1))
    grep -q "tlib_inner" <<< "$tbl" || fail "SPANSCOPE_INSTRUMENT_VERBOSE=1: no table on stderr"
    # GCC's compile-time lists (Clang has neither)
    if $c -finstrument-functions-exclude-function-list=x -x c -c /dev/null -o /dev/null 2>/dev/null
    then
      $c $opt -finstrument-functions -finstrument-functions-exclude-function-list=helper,skipme_a \
        -finstrument-functions-exclude-file-list=tplug.c "$src/prog.c" -o "$d/prog_gx" -L"$d" \
        -ltlib -Wl,-rpath,"$d" -lpthread -ldl
      SPANSCOPE_OUTPUT="$d/gx.h5" LD_PRELOAD="$lib" "$d/prog_gx" "$d/libtplug.so" > /dev/null
      same "-finstrument-functions-exclude-function-list" \
        "$(grep -v "${T}helper${T}\|${T}skipme_a${T}" <<< "$prog_counts")" "$(read_h5 "$d/gx.h5" count)"
    fi
  done
done

# C++: demangled names, an exception (g++, clang++)
cxx_counts=$(LC_ALL=C sort <<EOF
count${T}after()${T}3
count${T}int ns::twice<int>(int)${T}2
count${T}main${T}1
count${T}mid(int)${T}3
count${T}ns::Shape::area() const${T}3
count${T}ns::Shape::unit()${T}1
count${T}thrower(int)${T}3
count${T}top()${T}3
EOF
)
# after the exception, after() is top()'s child
cxx_parents=$(LC_ALL=C sort <<EOF
parent${T}after()${T}top()${T}3
parent${T}int ns::twice<int>(int)${T}main${T}2
parent${T}main${T}-${T}1
parent${T}mid(int)${T}top()${T}3
parent${T}ns::Shape::area() const${T}main${T}3
parent${T}ns::Shape::unit()${T}main${T}1
parent${T}thrower(int)${T}mid(int)${T}3
parent${T}top()${T}main${T}3
EOF
)
for cxx in g++ clang++; do
  command -v $cxx >/dev/null 2>&1 || { echo "run.sh: no $cxx, its C++ check skipped"; continue; }
  $cxx -O2 -finstrument-functions "$src/cxx.cpp" -o "$tmp/cxx_$cxx" -L"$libdir" \
    -lspanscope_instrument -Wl,-rpath,"$libdir"
  SPANSCOPE_OUTPUT="$tmp/cxx_$cxx.h5" "$tmp/cxx_$cxx" > /dev/null
  same "$cxx: demangled names" "$cxx_counts" "$(read_h5 "$tmp/cxx_$cxx.h5" count)"
  same "$cxx: parents (an exception)" "$cxx_parents" "$(read_h5 "$tmp/cxx_$cxx.h5" parent)"
  same "$cxx: misuse" "misuse${T}0" "$(read_h5 "$tmp/cxx_$cxx.h5" misuse)"
done

# Fortran: gfortran takes the same flag (names as the linker sees them)
if command -v gfortran >/dev/null 2>&1; then
  gfortran -O1 -finstrument-functions "$src/fort.f90" -o "$tmp/fort" -J "$tmp"
  out=$(SPANSCOPE_OUTPUT="$tmp/fort.h5" LD_PRELOAD="$lib" "$tmp/fort")
  same "gfortran: the program's output" "sum 20" "$out"
  same "gfortran: counts" "$(LC_ALL=C sort <<EOF
count${T}MAIN__${T}1
count${T}__geom_MOD_area${T}4
count${T}accumulate_${T}4
count${T}main${T}1
EOF
)" "$(read_h5 "$tmp/fort.h5" count)"
else
  echo "run.sh: no gfortran, its check skipped"
fi

if [ $fails -gt 0 ]; then
  echo "instrument: $fails of $checks checks failed"
  exit 1
fi
echo "instrument: $checks checks passed (compilers: ${ccs[*]})"
