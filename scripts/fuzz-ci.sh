#!/usr/bin/env bash
# fuzz-ci.sh -- builds the libFuzzer targets with clang (ASan + UBSan, the
# library instrumented for coverage) into build-fuzz, then runs the Chrome
# JSON, Perfetto, HDF5, crash-recovery, TOML configuration, view index,
# view HTTP server and MPI part index message fuzzers over their seed
# corpora for FUZZ_SECONDS each
# (default 30).  Fails on any
# crash, leak, timeout or out-of-memory.
#
# The HDF5 target reads through the isolated check (src/formats/h5_guard.c):
# a file that crashes libhdf5 crashes a forked child and is refused, so a
# crash of the fuzzer itself is a file the check let through.  libhdf5
# leaks some global state, so leaks are not checked there
# (fuzz/README.md).
#
#   scripts/fuzz-ci.sh                # build + 30 s per target
#   FUZZ_SECONDS=120 scripts/fuzz-ci.sh
#
# Findings (crash-*, timeout-*, oom-*, leak-*) are written to
# build-fuzz/findings/<target>/; new corpus entries go to
# build-fuzz/corpus/<target>/ (the seeds in fuzz/corpus stay untouched).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build-fuzz}
secs=${FUZZ_SECONDS:-30}
cc=${CC_FUZZ:-clang}
cxx=${CXX_FUZZ:-clang++}

command -v "$cc" >/dev/null || { echo "fuzz-ci: $cc not found" >&2; exit 2; }

# The root CMakeLists adds fuzz/ behind an option: use it when it is there,
# else configure through a small wrapper project that adds the root and
# then fuzz/ (so this script works either way).
opt=$(grep -oE 'option\((SPS_[A-Z_]*FUZZ[A-Z_]*)' "$root/CMakeLists.txt" | head -1 | cut -d'(' -f2 || true)
src=$root
extra=()
if [ -n "$opt" ]; then
  extra+=("-D$opt=ON")
else
  src=$build/wrapper
  mkdir -p "$src"
  cat > "$src/CMakeLists.txt" <<CM
cmake_minimum_required(VERSION 3.18)
project(spanscope_fuzz C CXX)
add_subdirectory("$root" spanscope)
if(NOT TARGET fuzz_chrome_json)
  add_subdirectory("$root/fuzz" fuzz)
endif()
CM
fi

cmake -S "$src" -B "$build" \
  -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_FLAGS="-fsanitize=fuzzer-no-link" \
  -DSPS_SANITIZE=address,undefined \
  -DSPS_BUILD_TESTS=OFF -DSPS_BUILD_TOOLS=OFF -DSPS_BUILD_EXAMPLES=OFF \
  -DSPS_BUILD_BENCH=OFF -DSPS_PYTHON=OFF "${extra[@]}" >/dev/null
cmake --build "$build" -j"$(nproc)" --target fuzz_chrome_json fuzz_perfetto fuzz_h5 fuzz_recover \
  fuzz_toml fuzz_viewidx fuzz_view_http fuzz_index_msg

status=0
for t in chrome_json perfetto h5 recover toml viewidx view_http index_msg; do  # toml, viewidx, view_http, index_msg: leaks checked (no HDF5)
  exe=$(find "$build" -name "fuzz_$t" -type f -perm -u+x | head -1)
  [ -n "$exe" ] || { echo "fuzz-ci: fuzz_$t was not built" >&2; exit 2; }
  work=$build/corpus/$t
  findings=$build/findings/$t
  mkdir -p "$work" "$findings"
  echo "== fuzz_$t: ${secs}s"
  # libFuzzer writes new inputs into the first corpus directory: keep the
  # seeds read-only by putting the work directory first.
  leaks=1
  [ "$t" = h5 ] && leaks=0
  [ "$t" = recover ] && leaks=0 # it writes HDF5: libhdf5 keeps global state
  # SPANSCOPE_READ_TIMEOUT: the check's child gives up before libFuzzer's
  # -timeout counts the input as a hang of the fuzzer
  if ! SPANSCOPE_READ_TIMEOUT=4 \
       ASAN_OPTIONS=detect_leaks=$leaks:abort_on_error=1:allocator_may_return_null=1 \
       UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
       "$exe" -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 \
         -print_final_stats=1 -artifact_prefix="$findings/" \
         "$work" "$root/fuzz/corpus/$t" 2>"$findings/log.txt"; then
    echo "fuzz-ci: fuzz_$t FAILED; log: $findings/log.txt; reproducer:" >&2
    ls "$findings" >&2
    grep -E 'ERROR|SUMMARY|#[0-9]+ 0x' "$findings/log.txt" | head -30 >&2 || true
    status=1
  else
    grep -E '^stat::number_of_executed_units|^Done' "$findings/log.txt" || true
    [ "$t" = h5 ] && { grep -E '^fuzz_h5:' "$findings/log.txt" || true; }
  fi
done
exit $status
