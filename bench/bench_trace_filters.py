#!/usr/bin/env python3
"""What run_script's name filters cost the recursive tracer per call
(docs/python.md, "Running a script"): ns per traced call of a small
function, best of --reps timed loops, for

  recorded            no filters: the callee is a region
  recorded, filtered  include/exclude patterns set, the callee passes them
  excluded            an exclude pattern leaves the callee out
  skipped by file     set_trace_skip leaves the callee's file out (the
                      standard library under only_user_code: today's skip)
  untraced            the same loop with no tracer (the floor)

The filters are decided once per code object (cached with its region), so
"excluded" should cost what "skipped by file" does, and "recorded,
filtered" what "recorded" does.  Refuses to run while the 1-minute load
average is 1.5 or more (shared 2-core VMs), unless --force.

    .venv/bin/python bench/bench_trace_filters.py [--calls 200000] [--reps 15] [--json OUT]
"""
import argparse
import json
import os
import sys
import time

from spanscope import ProfileManager, _ext


def callee():
    return 1


def loop(n):
    f = callee
    for _ in range(n):
        f()


def best_ns_per_call(fn, n, reps):
    """The fastest of reps runs of fn(n), in ns per iteration."""
    best = None
    for _ in range(reps):
        t0 = time.perf_counter_ns()
        fn(n)
        dt = (time.perf_counter_ns() - t0) / n
        best = dt if best is None or dt < best else best
    return best


def measure(case, n, reps):
    """ns per call of the traced loop under case's filters, in a fresh run."""
    ProfileManager.setup(output=None, replace=True, aggregation_mode=False)
    here = os.path.dirname(os.path.realpath(__file__))
    include, exclude, skip = {
        "recorded": ((), (), None),
        "recorded, filtered": (("*.callee", "*.nothing*"), ("*.other",), None),
        "excluded": ((), ("*.callee",), None),
        "skipped by file": ((), (), (here,)),
    }[case]
    traced = ProfileManager.profile("root", recursive=True)(loop)
    _ext.set_trace_skip(skip)
    _ext.set_trace_filters(include, exclude, None)
    try:
        traced(1000)  # first sight: the decision is taken and cached
        return best_ns_per_call(traced, n, reps)
    finally:
        _ext.set_trace_filters((), (), None)
        _ext.set_trace_skip(None)
        ProfileManager.finalize(verbose=False)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=200_000)
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--json", metavar="OUT", help="also write the figures as JSON")
    ap.add_argument("--force", action="store_true", help="run whatever the load")
    args = ap.parse_args()
    load = os.getloadavg()[0]
    if load >= 1.5 and not args.force:
        print(f"bench_trace_filters: load average {load:.2f} >= 1.5; not measuring "
              "(--force to measure anyway)", file=sys.stderr)
        return 3
    rows = {"untraced": best_ns_per_call(loop, args.calls, args.reps)}
    for case in ("recorded", "recorded, filtered", "excluded", "skipped by file"):
        rows[case] = measure(case, args.calls, args.reps)
    print(f"ns per call, best of {args.reps} x {args.calls} calls "
          f"(load {load:.2f} at start)")
    for case, ns in rows.items():
        extra = "" if case == "untraced" else f"  (+{ns - rows['untraced']:.1f} over untraced)"
        print(f"  {case:<20} {ns:7.1f}{extra}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"calls": args.calls, "reps": args.reps, "load": load,
                       "ns_per_call": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
