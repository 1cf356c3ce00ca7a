#!/usr/bin/env bash
# scope-profiler 0.7.5's own test suite, run against spanscope through a
# name mapping only (issue 32; tests/scope_profiler_suite/README.md).
#
#   scripts/scope-profiler-suite.sh [--keep DIR [--reuse-baseline]]
#
# 1. downloads scope-profiler 0.7.5's wheel (pip download, checked against
#    its sha256) and the suite's test-only dependencies (pinned, into a
#    --target folder: the venv is not changed);
# 2. runs the suite on scope-profiler itself: the tests that pass there are
#    the baseline;
# 3. generates the mapping (a `scope_profiler` package whose names are
#    spanscope's objects: tests/scope_profiler_suite/generate_mapping.py)
#    and runs the same suite through it;
# 4. compares with tests/scope_profiler_suite/expected_failures.txt: fails
#    (exit 1) when a baseline test fails on spanscope and is not listed.
#
# Needs spanscope installed in the Python used (PYTHON, default .venv's:
# `make py-install`) and network access for pip.  The work folder is a new
# temporary one, removed at the end, unless --keep DIR names one (kept; the
# wheel and the dependencies there are reused, and with --reuse-baseline
# the outcomes of an earlier run on scope-profiler too).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PY=${PYTHON:-$ROOT/.venv/bin/python}
HERE=$ROOT/tests/scope_profiler_suite

WHEEL=scope_profiler-0.7.5-py3-none-any.whl
WHEEL_SHA256=d746a97b79b4c0cfa5e1a812d9c733103554a8803a3ea4400fa13f60f3207227
# the suite's own test dependencies (scope-profiler's `test` extra:
# hypothesis) and its plotting stack (the `pproc` extra's maxplotlibx, without
# tikzfigure's PDF viewer: pymupdf/onnxruntime), pinned; numpy, h5py,
# matplotlib, plotly, pandas, textual, mcp, ipython come with spanscope's
# own test dependencies (scripts/install-deps.sh)
DEPS=(hypothesis==6.170.27 sortedcontainers==2.4.0 maxplotlibx==0.2.0 plotext==6.1.0
      tikzfigure==0.5.0 pint==0.25.3 flexcache==0.3 flexparser==0.4)

keep="" reuse=0
while [ $# -gt 0 ]; do
  case "$1" in
    --keep) keep=${2:?--keep needs a folder}; shift 2 ;;
    --reuse-baseline) reuse=1; shift ;;
    *) echo "scope-profiler-suite: unknown option '$1' (use --keep DIR [--reuse-baseline])" >&2
       exit 2 ;;
  esac
done
if [ -n "$keep" ]; then
  mkdir -p "$keep"; WORK=$(cd "$keep" && pwd)
else
  [ $reuse -eq 0 ] || { echo "scope-profiler-suite: --reuse-baseline needs --keep DIR" >&2; exit 2; }
  WORK=$(mktemp -d "${TMPDIR:-/tmp}/sp-suite.XXXXXX")
fi
[ -n "$keep" ] || trap 'rm -rf "$WORK"' EXIT
[ -x "$PY" ] || { echo "scope-profiler-suite: $PY not found (make py-install, or set PYTHON)" >&2; exit 2; }
"$PY" -c 'import spanscope' || { echo "scope-profiler-suite: spanscope does not import in $PY (not installed: make py-install)" >&2; exit 2; }

start=$(date +%s)
# -- 1. the wheel and the test dependencies
if [ ! -f "$WORK/dl/$WHEEL" ]; then
  "$PY" -m pip download -q --no-deps scope-profiler==0.7.5 -d "$WORK/dl"
fi
got=$(sha256sum "$WORK/dl/$WHEEL" | cut -d' ' -f1)
if [ "$got" != "$WHEEL_SHA256" ]; then
  echo "scope-profiler-suite: $WHEEL has sha256 $got, expected $WHEEL_SHA256" >&2
  exit 2
fi
rm -rf "$WORK/real" && mkdir -p "$WORK/real"
"$PY" -m zipfile -e "$WORK/dl/$WHEEL" "$WORK/real"
if [ ! -f "$WORK/deps/.done" ]; then
  rm -rf "$WORK/deps"
  "$PY" -m pip install -q --no-deps --target "$WORK/deps" "${DEPS[@]}"
  touch "$WORK/deps/.done"
fi

# -- 2. and 3.: the same pytest command on each side.  Plugins are loaded by
# name (no autoloading), so that each side gets exactly its own pytest
# plugin: scope-profiler's, or spanscope's (the module the mapping table
# names for scope_profiler.pytest_plugin), as their entry points would.
run_suite() {  # run_suite SIDE PACKAGE_DIR PYTEST_PLUGIN
  local side=$1 dir=$2 plugin=$3 plugins=_hypothesis_pytestplugin
  [ -n "$plugin" ] && plugins="$plugin,$plugins"
  echo "scope-profiler-suite: running scope-profiler's tests on $side"
  rm -f "$WORK/$side.json"
  ( cd "$dir" &&
    PYTHONPATH="$dir:$WORK/deps:$HERE" PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 \
    PYTEST_PLUGINS="$plugins" SPS_SUITE_OUTCOMES="$WORK/$side.json" \
    MPLBACKEND=Agg timeout 1800 "$PY" -m pytest -q -p outcomes_plugin -p no:cacheprovider --continue-on-collection-errors \
      --rootdir="$dir" scope_profiler/tests \
      >"$WORK/$side.log" 2>&1 ) || true
  if [ ! -s "$WORK/$side.json" ]; then
    echo "scope-profiler-suite: the run on $side recorded no outcomes; its log's end:" >&2
    tail -n 30 "$WORK/$side.log" >&2
    exit 2
  fi
  tail -n 1 "$WORK/$side.log"
}
# the run on scope-profiler and the run on spanscope are independent (their
# own folders, outcome files and logs): on two cores they run side by side
base_pid=
if [ $reuse -eq 1 ] && [ -s "$WORK/scope-profiler.json" ]; then
  echo "scope-profiler-suite: reusing $WORK/scope-profiler.json (the run on scope-profiler)"
else
  rm -f "$WORK/scope-profiler.json"
  run_suite scope-profiler "$WORK/real" scope_profiler.pytest_plugin &
  base_pid=$!
fi

"$PY" "$HERE/generate_mapping.py" "$WORK/real" "$WORK/map" --repo "$ROOT" --report "$WORK/names.json"
plugin=$("$PY" -c "import sys; sys.path.insert(0, '$HERE'); import mapping_table as t, importlib.util as u
m = t.TABLE['scope_profiler.pytest_plugin'][0]
print(m if u.find_spec(m) else '')")
run_suite spanscope "$WORK/map" "$plugin"
if [ -n "$base_pid" ]; then
  wait "$base_pid" || exit 2
fi

# -- 4. the comparison (its last line, "N passed, N failed", is the script's)
if [ -n "$keep" ]; then
  echo "scope-profiler-suite: $(( $(date +%s) - start )) s; logs and outcomes in $WORK"
else
  echo "scope-profiler-suite: $(( $(date +%s) - start )) s (--keep DIR keeps the logs)"
fi
status=0
"$PY" "$HERE/compare.py" --baseline "$WORK/scope-profiler.json" --mapped "$WORK/spanscope.json" \
  --expected "$HERE/expected_failures.txt" || status=$?
exit $status
