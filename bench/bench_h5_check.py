#!/usr/bin/env python3
"""What the isolated check costs a reader (docs/robustness.md): the time of
spanscope.read on files seen for the first time, with the check
(SPANSCOPE_H5_ISOLATE unset) and without (=0), for a small and a large
recording, and the check alone (sps_h5_check).  Fresh copies each time (a
kept verdict costs nothing); medians and best of --reps.

    python bench/bench_h5_check.py [--calls 1000000] [--reps 15]
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHILD = r"""
import os, shutil, statistics, sys, time
import spanscope as sp
from spanscope import _ext
src, reps, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
out = []
for k in range(reps):
    dst = src + f".copy{k}"
    shutil.copyfile(src, dst)
    t0 = time.perf_counter()
    if mode == "check":
        _ext.h5_check(dst)
    else:
        sp.read(dst)
    out.append(time.perf_counter() - t0)
    os.unlink(dst)
print(statistics.median(out), min(out))
"""


def record(path: Path, calls: int) -> None:
    code = ("import spanscope as sp\n"
            f"sp.ProfileManager.setup(file_path={str(path)!r})\n"
            "r = sp.ProfileManager.region('step'); q = sp.ProfileManager.region('inner')\n"
            f"for i in range({calls}):\n"
            "    with r:\n"
            "        with q: pass\n"
            "sp.ProfileManager.finalize(verbose=False)\n")
    subprocess.run([sys.executable, "-c", code], check=True)


def measure(path: Path, reps: int, mode: str, isolate: bool) -> tuple[float, float]:
    env = dict(os.environ)
    env.pop("SPANSCOPE_H5_ISOLATE", None)
    if not isolate:
        env["SPANSCOPE_H5_ISOLATE"] = "0"
    p = subprocess.run([sys.executable, "-c", CHILD, str(path), str(reps), mode],
                       capture_output=True, text=True, env=env, check=True)
    med, best = map(float, p.stdout.split())
    return med, best


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=1000000, help="calls of the large file")
    ap.add_argument("--reps", type=int, default=15)
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench_h5_check_"))
    rows = []
    try:
        for label, calls in (("small", 100), ("large", a.calls)):
            f = tmp / f"{label}.h5"
            record(f, calls)
            size = f.stat().st_size
            off = measure(f, a.reps, "read", False)
            on = measure(f, a.reps, "read", True)
            chk = measure(f, a.reps, "check", True)
            rows.append((label, 2 * calls, size, off, on, chk))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{'file':<6} {'calls':>9} {'bytes':>10} {'read, no check':>16} {'read, checked':>15} "
          f"{'check alone':>12} {'added':>7}")
    for label, calls, size, off, on, chk in rows:
        print(f"{label:<6} {calls:>9} {size:>10} {off[0] * 1e3:>13.2f} ms {on[0] * 1e3:>12.2f} ms "
              f"{chk[0] * 1e3:>9.2f} ms {100 * (on[0] - off[0]) / off[0]:>6.0f}%")
    print(f"(medians of {a.reps} reads of fresh copies; best: "
          + ", ".join(f"{r[0]} {r[3][1] * 1e3:.2f}/{r[4][1] * 1e3:.2f}/{r[5][1] * 1e3:.2f} ms"
                      for r in rows) + ")")
    return 0


if __name__ == "__main__":
    sys.exit(main())
