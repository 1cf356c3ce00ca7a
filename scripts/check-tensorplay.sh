#!/usr/bin/env bash
# spanscope.profiler side by side with tensorplay.profiler 1.1.0 (make
# check-tensorplay): only tests/python/test_tensorplay_side_by_side.py, on
# CPython 3.10 (tensorplay ships cp310 wheels only), in .venv-3.10 -- made
# or refreshed by check-pythons.sh's venv step, which installs
# tensorplay==1.1.0 there -- with spanscope built for 3.10
# (build/pip-3.10).  Meant to run in CI every time (the whole suite runs
# on 3.10 one day in three only).  Prints the counts (compared / equal /
# intended differences); fails when the module fails or is skipped.
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
bash scripts/check-pythons.sh --deps-only 3.10 || exit 1
echo "check-tensorplay: building spanscope for 3.10"
.venv-3.10/bin/python -m pip install -q --no-build-isolation -C build-dir="$BUILD/pip-3.10" . \
  >"$BUILD/pythons/tensorplay-build.log" 2>&1 ||
  { echo "check-tensorplay: the package did not build (see $BUILD/pythons/tensorplay-build.log)"; exit 1; }
out=$(SPS_BUILD=$PWD/$BUILD .venv-3.10/bin/python -m pytest -q -rs -s -p no:cacheprovider \
  tests/python/test_tensorplay_side_by_side.py 2>&1)
rc=$?
echo "$out" | tail -40
if echo "$out" | grep -qE '[0-9]+ skipped' && ! echo "$out" | grep -qE '[0-9]+ passed'; then
  echo "check-tensorplay: the module was skipped (see the reason above)"
  exit 1
fi
exit $rc
