#!/usr/bin/env python3
"""What line profiling costs per line executed (issue 34, part 6;
docs/line-profiles.md).

    python bench/bench_line_profile.py [--quick] [--reps N] [--json PATH]

One Python function (a loop: the ``for`` line and two body lines per
iteration) is called in four ways, in turns, REPS times each (the region
alone in a session of its own, beside ``plain``; the other three in a
``use_line_profiler=True`` session, beside ``plain`` again):

* ``plain``: the function alone;
* ``region``: spanscope's ``@profile`` region around it, no line profile
  (the C core's timing only);
* ``line_profiler``: line_profiler alone, as its own decorator runs it
  (``LineProfiler`` holding the function, ``enable_by_count`` /
  ``disable_by_count`` around each call; no spanscope);
* ``spanscope``: a ``use_line_profiler=True`` session's ``@profile`` region
  (the C core's timing plus the region's LineProfiler, switched by the call
  hooks).

Each at two call sizes: long calls (ITER iterations: the cost per line, the
per-call part spread thin) and short ones (10 iterations: the per-call part
shows).  The lines a call executes are line_profiler's own hit count.  The
table shows, per line executed, what line_profiler adds over ``plain`` and
what spanscope's ``use_line_profiler`` region adds, best of REPS (shared
VMs are noisy), their ratio, and spanscope's extra per call.  The hits
spanscope recorded are checked against the calls made (an exact count).
Needs spanscope and line_profiler (the ``line-profiler`` extra).
"""
import argparse
import gc
import json
import os
import platform
import sys
import time


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def make_kernel():
    """A fresh function object over the one kernel code (line_profiler pads
    the code of the function it is given: each mode gets its own)."""
    def kernel(n):
        total = 0
        for i in range(n):
            x = i * 3
            total += x
        return total
    return kernel


def timed(func, n, calls):
    """ns for calls calls of func(n), the collector off."""
    gc.collect()
    gc.disable()
    try:
        t0 = time.perf_counter_ns()
        for _ in range(calls):
            func(n)
        return time.perf_counter_ns() - t0
    finally:
        gc.enable()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer lines and repetitions")
    ap.add_argument("--reps", type=int, default=None, help="repetitions (best of them)")
    ap.add_argument("--json", help="write the results here")
    a = ap.parse_args(argv)
    try:
        from line_profiler import LineProfiler
    except ImportError:
        print("Line profiles: not measured (line_profiler is not installed: "
              "pip install 'spanscope[line-profiler]')")
        return 0
    from spanscope import ProfileManager as PM

    reps = a.reps or (3 if a.quick else 7)
    long_n, long_calls = (2_000, 20) if a.quick else (10_000, 40)
    short_n, short_calls = 10, (2_000 if a.quick else 10_000)

    plain = make_kernel()
    lp = LineProfiler()
    lp_kernel = make_kernel()
    lp.add_function(lp_kernel)

    def with_line_profiler(n):
        lp.enable_by_count()
        try:
            return lp_kernel(n)
        finally:
            lp.disable_by_count()

    def lines_per_call(n):
        return 3 * n + 3  # total = 0, n + 1 for lines, 2n body lines, return

    sizes = (("long", long_n, long_calls), ("short", short_n, short_calls))
    best = {}
    lines_run = {}

    def measure(modes):
        for m, f in modes.items():  # warm up
            timed(f, short_n, 10)
            lines_run[m] = lines_run.get(m, 0) + 10 * lines_per_call(short_n)
        for _ in range(reps):
            for size, n, calls in sizes:
                for m, f in modes.items():
                    t = timed(f, n, calls) / calls
                    best[(m, size)] = min(best.get((m, size), float("inf")), t)
                    lines_run[m] = lines_run.get(m, 0) + calls * lines_per_call(n)

    # the region alone: a session without line profiles
    PM.setup(output=None)
    measure({"plain_r": plain, "region": PM.profile("kernel_region")(make_kernel())})
    PM.finalize(verbose=False)
    # line_profiler alone, and spanscope's use_line_profiler region
    PM.setup(output=None, use_line_profiler=True)
    sps_line = PM.profile("kernel_lines")(make_kernel())
    measure({"plain": plain, "line_profiler": with_line_profiler, "spanscope": sps_line})
    # the lines executed, as line_profiler counted them in each
    (rows,) = [v for k, v in lp.get_stats().timings.items() if k[2].endswith("kernel")]
    lp_hits = sum(h for _line, h, _t in rows)
    (sps_rows,) = [v for k, v in PM.get_region("kernel_lines").get_stats().timings.items()
                   if k[2].endswith("kernel")]
    sps_hits = sum(h for _line, h, _t in sps_rows)
    PM.finalize(verbose=False)
    expected = lines_run["spanscope"]
    ok = sps_hits == expected and lp_hits == lines_run["line_profiler"]

    iters = {"long": long_n, "short": short_n}

    print("Line profiles: cost per line executed, best of %d (%s, Python %s, line_profiler %s)"
          % (reps, cpu_model(), platform.python_version(),
             getattr(sys.modules.get("line_profiler"), "__version__", "?")))
    print("  %-32s %12s %12s" % ("", "long calls", "short calls"))
    print("  %-32s %12s %12s" % ("iterations per call", long_n, short_n))
    print("  %-32s %12d %12d" % ("lines per call", lines_per_call(long_n),
                                 lines_per_call(short_n)))
    out = {"cpu": cpu_model(), "python": platform.python_version(), "reps": reps,
           "hits_exact": ok, "rows": {}}
    for label, mode in (("plain, ns per line", "plain"), ("plain (region's turn)", "plain_r"),
                        ("region only, ns per line", "region"),
                        ("line_profiler, ns per line", "line_profiler"),
                        ("spanscope lines, ns per line", "spanscope")):
        cells = [best[(mode, s)] / lines_per_call(iters[s]) for s in ("long", "short")]
        out["rows"][mode] = cells
        print("  %-32s %12.1f %12.1f" % (label, *cells))
    added = {}
    for mode, base in (("region", "plain_r"), ("line_profiler", "plain"),
                       ("spanscope", "plain")):  # each against plain of its own turns
        added[mode] = [(best[(mode, s)] - best[(base, s)]) / lines_per_call(iters[s])
                       for s in ("long", "short")]
    print("  %-32s %12.1f %12.1f" % ("added by the region, ns/line", *added["region"]))
    print("  %-32s %12.1f %12.1f" % ("added by line_profiler, ns/line", *added["line_profiler"]))
    print("  %-32s %12.1f %12.1f" % ("added by spanscope, ns/line", *added["spanscope"]))
    ratio = [s / l if l > 0 else float("nan")
             for s, l in zip(added["spanscope"], added["line_profiler"])]
    print("  %-32s %12.2f %12.2f" % ("spanscope / line_profiler", *ratio))
    # per call: meaningful on short calls (on long ones it drowns in the
    # lines' own noise), so printed for those
    per_call = [best[("spanscope", s)] - best[("line_profiler", s)] for s in ("long", "short")]
    print("  %-32s %12s %12.0f" % ("spanscope's extra per call, ns", "-", per_call[1]))
    print("  lines counted: spanscope %d of %d run, line_profiler %d of %d: %s"
          % (sps_hits, expected, lp_hits, lines_run["line_profiler"],
             "exact" if ok else "MISMATCH"))
    out.update(added=added, ratio=ratio, extra_per_call_ns=per_call,
               hits={"spanscope": sps_hits, "line_profiler": lp_hits,
                     "run": {"spanscope": expected, "line_profiler": lines_run["line_profiler"]}})
    if a.json:
        os.makedirs(os.path.dirname(os.path.abspath(a.json)), exist_ok=True)
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
