#!/usr/bin/env bash
# The whole Python suite on each CPython the package supports (make check-pythons).
#
#   bash scripts/check-pythons.sh [--deps-only | --bench [--quick]] [VERSION...]
#                                               (default: 3.10 3.11 3.12 3.13)
#
# For each version: finds the interpreter (pyenv's versions/VERSION.*, else
# pythonVERSION on PATH), makes .venv-VERSION once (reused while its
# interpreter is there and its packages import), installs the test
# dependencies from PyPI into it, builds and installs spanscope there (its
# own scikit-build directory, build/pip-VERSION: one CMake cache per
# interpreter) and runs tests/python with SPS_BUILD=build (the C build, the
# same for every version).  Prints one summary line per version and fails
# when any version fails or has no interpreter.
#
# The packages are install-deps.sh's list for .venv; an optional one that
# has no wheel (or does not build) for a version is left out with a note,
# and the tests that need it skip with their reason (pytest's -rs lines
# are kept in the log).
# Logs: build/pythons/VERSION.log.  PYTESTS=PATHS runs those tests only.
#
# --bench (make bench-pythons): instead of the tests, bench/bench_python.py
# in each venv (the Python face's table per version, with torch's
# record_function where torch is installed: BENCH_TORCH=1 installs it, about
# 6 GB per venv), then one table of the issue's cost targets per version
# (build/pythons/bench-VERSION.json).
set -uo pipefail
cd "$(dirname "$0")/.."

deps_only=0
bench=0
quick=()
versions=()
for a in "$@"; do
  case "$a" in
    --deps-only) deps_only=1 ;;
    --bench) bench=1 ;;
    --quick) quick=(--quick) ;;
    3.*) versions+=("$a") ;;
    *) echo "check-pythons: unknown argument $a" >&2; exit 2 ;;
  esac
done
[ ${#versions[@]} -gt 0 ] || versions=(3.10 3.11 3.12 3.13)

BUILD=${BUILD:-build}
REQUIRED="numpy h5py pytest pytest-xdist scope-profiler scikit-build-core perfetto protobuf matplotlib plotly websocket-client"
REQUIRED_IMPORTS="numpy, h5py, pytest, xdist, scope_profiler, scikit_build_core, perfetto, google.protobuf, matplotlib, plotly, websocket"
# module or module=pip-spec: a spec is installed every time (pip leaves a
# satisfied one alone, and moves a venv off a version the tests do not take:
# mcp 2 renamed the API the server uses; pyproject.toml pins the same)
# line_profiler (use_line_profiler: tests/python/test_line_profiles.py), pandas
# (Samples.to_dataframe: test_samples_python_face.py) and IPython (%%scope_line)
# are install-deps.sh's too, so those tests run on every version
OPTIONAL="snakeviz pyarrow textual=textual>=0.86 mcp=mcp>=1.6,<2 line_profiler pandas IPython=ipython"  # mpi4py: only the MPI tests under mpirun (CTest) use it
mkdir -p "$BUILD/pythons"

# The interpreter of version $1: pyenv's newest $1.N, else python$1 on PATH.
find_python() {
  local root
  root=$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")
  local best
  best=$(ls -d "$root/versions/$1".* 2>/dev/null | grep -E "/$1\.[0-9]+$" | sort -V | tail -1)
  if [ -n "$best" ] && [ -x "$best/bin/python$1" ]; then
    echo "$best/bin/python$1"
  elif command -v "python$1" >/dev/null 2>&1; then
    command -v "python$1"
  fi
}

# Makes or refreshes .venv-$1 with interpreter $2; returns non-zero when a
# required package does not install.
make_venv() {
  local v=$1 py=$2 venv=.venv-$1
  if [ -x "$venv/bin/python" ] && ! "$venv/bin/python" -c 'import sys' >/dev/null 2>&1; then
    rm -rf "$venv"  # its interpreter is gone (pyenv reinstalled): make it again
  fi
  [ -x "$venv/bin/python" ] || "$py" -m venv "$venv" || return 1
  if ! "$venv/bin/python" -c "import $REQUIRED_IMPORTS" >/dev/null 2>&1; then
    echo "check-pythons $v: pip install $REQUIRED"
    "$venv/bin/python" -m pip install -q --upgrade pip >/dev/null
    "$venv/bin/python" -m pip install -q $REQUIRED || return 1
  fi
  local p
  for p in $OPTIONAL; do
    local mod=${p%%=*} spec=${p#*=}
    if [ "$mod" = "$p" ]; then
      "$venv/bin/python" -c "import $mod" >/dev/null 2>&1 && continue
    fi
    "$venv/bin/python" -m pip install -q "$spec" >/dev/null 2>&1 ||
      echo "check-pythons $v: $spec not installed (no wheel or no build for Python $v): its tests skip"
  done
  # tensorplay 1.1.0 (cp310 wheels only): tests/python/test_tensorplay_side_by_side.py
  # runs the same scripts through it and spanscope.profiler (issue 39)
  if [ "$v" = 3.10 ] && ! "$venv/bin/python" -c \
      'import tensorplay, sys; sys.exit(tensorplay.__version__ != "1.1.0")' >/dev/null 2>&1; then
    echo "check-pythons $v: pip install tensorplay==1.1.0"
    "$venv/bin/python" -m pip install -q "tensorplay==1.1.0" || return 1
  fi
}

# Some Python tests read files the C tests write (build/tests/c/tmp): run
# CTest once when they are missing, so that no test skips for want of them.
if [ "$deps_only" -eq 0 ] && [ "$bench" -eq 0 ] && [ ! -e "$BUILD/tests/c/tmp/chrome_rt.json" ]; then
  echo "check-pythons: running the C tests first (they write the files some Python tests read)"
  (cd "$BUILD" && ctest -j "${JOBS:-2}" -E '^mpi_' >/dev/null) ||
    echo "check-pythons: some C tests failed (make check-c says which)"
fi

declare -A result
fail=0
for v in "${versions[@]}"; do
  py=$(find_python "$v")
  if [ -z "$py" ]; then
    result[$v]="FAILED: no python$v (pyenv install $v, or put python$v on PATH)"
    fail=1
    continue
  fi
  log="$BUILD/pythons/$v.log"
  if ! make_venv "$v" "$py" 2>&1 | tee "$log"; then
    result[$v]="FAILED: the test dependencies did not install (see $log)"
    fail=1
    continue
  fi
  [ "$deps_only" -eq 1 ] && { result[$v]="venv ready"; continue; }
  echo "check-pythons $v: building spanscope ($py)"
  if ! .venv-$v/bin/python -m pip install -q --no-build-isolation \
      -C build-dir="$BUILD/pip-$v" . >>"$log" 2>&1; then
    result[$v]="FAILED: the package did not build (see $log)"
    fail=1
    continue
  fi
  if [ "$bench" -eq 1 ]; then
    if [ "${BENCH_TORCH:-0}" = 1 ] && ! .venv-$v/bin/python -c 'import torch' >/dev/null 2>&1; then
      echo "check-pythons $v: pip install torch (BENCH_TORCH=1)"
      .venv-$v/bin/python -m pip install -q torch >>"$log" 2>&1 ||
        echo "check-pythons $v: torch did not install: not measured"
    fi
    echo
    .venv-$v/bin/python bench/bench_python.py "${quick[@]}" --json "$BUILD/pythons/bench-$v.json" \
      2> >(grep -v -E '^(USDT|ERROR|WARNING):' >&2)  # torch's profiler logs its start and stop
    rc=$?
    if [ $rc -ne 0 ]; then
      result[$v]="FAILED: the benchmark exited $rc"
      fail=1
    else
      result[$v]="benchmarked"
    fi
    continue
  fi
  echo "check-pythons $v: pytest tests/python"
  SPS_BUILD=$PWD/$BUILD .venv-$v/bin/python -m pytest -q -rfEs -n 2 -p no:cacheprovider ${PYTESTS:-tests/python} \
    >>"$log" 2>&1
  rc=$?
  summary=$(grep -E '^(=+ )?[0-9]+ (passed|failed)|no tests ran|[0-9]+ (passed|failed|error)' "$log" | tail -1 | sed 's/=//g; s/^ *//; s/ *$//')
  if [ $rc -ne 0 ]; then
    # CI keeps only this output: name the failing tests and show their
    # tracebacks' last lines here, not only in the log
    echo "check-pythons $v: $summary; what failed (from $log):"
    grep -E '^(FAILED|ERROR) ' "$log" | sed 's/^/  /'
    grep -E '^E  ' "$log" | head -40 | sed 's/^/  /'
    # the failed tests once more, alone, as the Makefile's targets do
    # (RERUN_NOTE there): passing now, the version passes with them named
    mapfile -t ids < <(grep -E '^(FAILED|ERROR) ' "$log" | sed -E 's/^(FAILED|ERROR) //; s/ - .*$//' | sort -u)
    if [ ${#ids[@]} -gt 0 ] && [ ${#ids[@]} -le 20 ]; then
      echo "*** check-pythons $v: the ${#ids[@]} failed test(s) run once more, alone: one that fails again fails this version; one that passes now is flaky (fix it: named above)"
      echo "--- once more, alone:" >>"$log"
      SPS_BUILD=$PWD/$BUILD .venv-$v/bin/python -m pytest -q -rfE -p no:cacheprovider "${ids[@]}" >>"$log" 2>&1
      rc=$?
      again=$(grep -E '[0-9]+ (passed|failed|error)' "$log" | tail -1 | sed 's/=//g; s/^ *//; s/ *$//')
      echo "check-pythons $v: once more, alone: $again"
      [ $rc -eq 0 ] && summary="$summary, then the failed ones passed alone (flaky: ${ids[*]})"
    fi
  fi
  if [ $rc -ne 0 ]; then
    result[$v]="FAILED: $summary (see $log)"
    fail=1
  else
    result[$v]="ok: $summary"
  fi
done

echo
if [ "$bench" -eq 1 ]; then
  jsons=()
  for v in "${versions[@]}"; do
    [ "${result[$v]}" = benchmarked ] && jsons+=("$BUILD/pythons/bench-$v.json")
  done
  [ ${#jsons[@]} -gt 0 ] && python3 bench/python_versions.py "${jsons[@]}"
  for v in "${versions[@]}"; do
    [ "${result[$v]}" = benchmarked ] || printf '  %-5s %s\n' "$v" "${result[$v]}"
  done
  exit $fail
fi
echo "check-pythons: the Python suite per version"
for v in "${versions[@]}"; do
  printf '  %-5s %s\n' "$v" "${result[$v]}"
done
exit $fail
