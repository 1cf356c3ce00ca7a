"""ProfileManager.finalize(verbose=True): wall time of the finalize that
writes the file and prints the region table, for sessions of 10^5, 10^6
and 10^7 calls (issue 12: the table is print_summary's, built from the
period's calls pooled by call path in C as finalize writes them, and must
stay cheap at 10^7).

    python bench/bench_finalize_table.py [--calls 100000,1000000,10000000]
                                         [--reps 3] [--json out.json]

Each measurement runs in a fresh interpreter: a session records the calls
(a loop "step" holding "work" and "io", so three call paths and nesting),
then finalize(verbose=True) is timed with the table going to /dev/null;
also finalize(verbose=False) of the same session size, so the table's
share is visible, and print_summary() of the file read back with
spanscope.read_h5 (the read itself not timed).  The figure is the best of
--reps processes (these are shared VMs: run it when `uptime` says the load
is below 1.5).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

_CHILD = r'''
import os, sys, time
from spanscope import ProfileManager as PM
calls, mode, path = int(sys.argv[1]), sys.argv[2], sys.argv[3]
verbose = mode == "1"
PM.setup(file_path=path)
step, work, io = PM.region("step"), PM.region("work"), PM.region("io")
for _ in range(calls // 3):
    with step:
        with work:
            pass
        with io:
            pass
out = os.dup(1)
devnull = os.open(os.devnull, os.O_WRONLY)
os.dup2(devnull, 1)
t0 = time.perf_counter()
PM.finalize(verbose=verbose)
sys.stdout.flush()
dt = time.perf_counter() - t0
if mode == "print":
    import spanscope
    res = spanscope.read_h5(path)
    t0 = time.perf_counter()
    res.print_summary()
    sys.stdout.flush()
    dt = time.perf_counter() - t0
os.dup2(out, 1)
print(dt)
'''


def one(calls: int, mode: str) -> float:
    with tempfile.TemporaryDirectory() as d:
        p = subprocess.run([sys.executable, "-c", _CHILD, str(calls), mode,
                            os.path.join(d, "f.h5")], capture_output=True, text=True,
                           check=True)
        return float(p.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", default="100000,1000000,10000000")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--no-print", action="store_true", help="skip the print_summary column")
    a = ap.parse_args()
    rows = []
    print(f"{'calls':>10}  {'finalize(verbose=True) s':>25}  {'finalize(verbose=False) s':>26}"
          f"  {'print_summary() s':>18}")
    for n in (int(x) for x in a.calls.split(",")):
        v = min(one(n, "1") for _ in range(a.reps))
        q = min(one(n, "0") for _ in range(a.reps))
        ps = min(one(n, "print") for _ in range(a.reps)) if not a.no_print else float("nan")
        rows.append({"calls": n, "verbose_s": v, "quiet_s": q, "print_summary_s": ps})
        print(f"{n:>10}  {v:>25.3f}  {q:>26.3f}  {ps:>18.3f}", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"reps": a.reps, "best_of": rows, "load": os.getloadavg()}, f, indent=1)


if __name__ == "__main__":
    main()
