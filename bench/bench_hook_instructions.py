"""Instructions per traced call of the recursive tracer under each hook, per
Python version, counted by valgrind (callgrind's "Collected" count): a
measure that the load of a shared machine does not move, to set beside
bench_python.py's times when choosing the hook per version.

    python bench/bench_hook_instructions.py [--calls N] PYTHON...

Each PYTHON is an interpreter with spanscope installed (e.g. .venv-3.12/bin/python).
For each hook it offers, a child runs N and then 2N traced calls of a
one-line function inside one outermost recursive call ("call"), and N and 2N
outermost calls of an empty recursive function ("outer": the hook switched
on and off); the difference of the two counts over N is the cost per call,
the start-up cancelling out (PYTHONHASHSEED=0: the same dict layouts in
both).  The same loop under a plain (not recursive) decorator ("plain") is
the floor.
"""
import argparse
import json
import os
import re
import subprocess
import sys

CHILD = r'''
import sys
from spanscope import ProfileManager, _ext
hook, n, what = sys.argv[1], int(sys.argv[2]), sys.argv[3]
_ext.set_trace_hook(hook)
ProfileManager.setup(output=None, overflow="spill")
def callee():
    return None
def loop(k):
    for _ in range(k):
        callee()
rec = ProfileManager.profile("rec", recursive=True)(loop)
plain = ProfileManager.profile("plain")(loop)
outer = ProfileManager.profile("outer", recursive=True)(lambda: None)
if what == "call":
    rec(n)
elif what == "plain":
    plain(n)
else:
    for _ in range(n):
        outer()
assert ProfileManager.get_region({"call": "rec"}.get(what, what)).num_calls
ProfileManager._reset()
'''


def instructions(python, hook, n, what):
    """callgrind's count of instructions for one child run."""
    p = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                        python, "-c", CHILD, hook, str(n), what],
                       capture_output=True, text=True, timeout=900,
                       env={**os.environ, "PYTHONHASHSEED": "0"})
    if p.returncode != 0:
        raise RuntimeError(f"{python} {hook} {what}: exit {p.returncode}: {p.stderr[-500:]}")
    m = re.search(r"Collected : (\d+)", p.stderr)
    if not m:
        raise RuntimeError(f"no callgrind count in: {p.stderr[-500:]}")
    return int(m.group(1))


def per_call(python, hook, n, what):
    return (instructions(python, hook, 2 * n, what) - instructions(python, hook, n, what)) / n


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--json")
    ap.add_argument("pythons", nargs="+")
    a = ap.parse_args()
    out = {}
    print(f"instructions per call (callgrind, {a.calls} vs {2 * a.calls} calls; outermost: "
          f"{max(a.calls // 10, 200)} vs {2 * max(a.calls // 10, 200)})")
    print(f"{'python':<8} {'hook':<11} {'plain call':>10} {'traced call':>12} "
          f"{'outermost call':>15}")
    for py in a.pythons:
        ver = subprocess.run([py, "-c", "import sys; print(sys.version.split()[0])"],
                             capture_output=True, text=True, check=True).stdout.strip()
        hooks = ["setprofile"] + (["monitoring"] if tuple(map(int, ver.split(".")[:2])) >= (3, 12)
                                  else [])
        plain = per_call(py, "setprofile", a.calls, "plain")
        for h in hooks:
            call = per_call(py, h, a.calls, "call")
            outer = per_call(py, h, max(a.calls // 10, 200), "outer")  # the hook on and off
            out.setdefault(ver, {})[h] = {"plain": plain, "call": call, "outer": outer}
            print(f"{ver:<8} {h:<11} {plain:10.0f} {call:12.0f} {outer:15.0f}", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
