#!/usr/bin/env python3
"""What spanscope's memory sources cost (issue 33, part 7; docs/memory.md).

    python bench/bench_memhooks.py [--build build] [--quick] [--json PATH]

1. Python: a loop allocating small objects (``object()`` in a ``for`` over a
   range: each iteration allocates and frees an object and an int) timed
   with no hook, with spanscope's allocator hooks (_ext.mem_hooks_install,
   Python's domains), with tracemalloc (1 frame, its default) and with
   memray (its default, and with trace_python_allocators=True, the mode
   that sees pymalloc's allocations as these hooks do).  Added cost per
   allocation = (time with - time without) / allocations, an allocation
   counted with its free; the allocations per iteration are counted by the
   hooks themselves.  Target: spanscope's <= 0.25 x tracemalloc's.
2. C (when --build has libspanscope_malloc.so and a C compiler is there): a
   malloc/free loop compiled here, run plain and with the library
   preloaded; added ns per malloc+free pair.

Each mode runs in turns with the others, REPEAT times; the table shows the
best (minimum) of the repetitions and the median in brackets (shared VMs are
noisy).  Standard library, spanscope, and memray when installed (the
`memray` extra; the row says when it is not).
"""
import argparse
import gc
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
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


def loop(n):
    """The measured loop: small objects made and dropped."""
    for _ in range(n):
        object()


def timed(n):
    gc.disable()
    try:
        t0 = time.perf_counter_ns()
        loop(n)
        return time.perf_counter_ns() - t0
    finally:
        gc.enable()


def allocs_per_iteration(ext, n):
    """How many allocator calls one iteration makes (counted by the hooks)."""
    ext.mem_hooks_install(python=True, numpy=False)
    try:
        c0 = ext.mem_thread_counts()
        timed(n)
        c1 = ext.mem_thread_counts()
    finally:
        ext.mem_hooks_uninstall()
    return (c1["allocs"] - c0["allocs"]) / n, (c1["frees"] - c0["frees"]) / n


class Mode:
    """A way of running the loop: start() before, stop() after."""

    def __init__(self, name, start=None, stop=None, missing=None):
        self.name, self.start, self.stop, self.missing = name, start, stop, missing
        self.samples = []


def make_modes(ext, tmp):
    modes = [Mode("no hook")]
    modes.append(Mode("spanscope hooks",
                      lambda: ext.mem_hooks_install(python=True, numpy=False),
                      lambda: ext.mem_hooks_uninstall()))
    import tracemalloc
    modes.append(Mode("tracemalloc (1 frame)", lambda: tracemalloc.start(1), tracemalloc.stop))
    try:
        import memray
    except ImportError:
        memray = None
    for label, kw in (("memray", {}),
                      ("memray, python allocators", {"trace_python_allocators": True})):
        if memray is None:
            modes.append(Mode(label, missing="memray is not installed (pip install memray)"))
            continue
        state = {}

        def start(kw=kw, state=state):
            path = os.path.join(tmp, "memray-%d.bin" % len(os.listdir(tmp)))
            state["t"] = memray.Tracker(path, **kw)
            state["t"].__enter__()

        def stop(state=state):
            state["t"].__exit__(None, None, None)

        modes.append(Mode(label, start, stop))
    return modes


C_LOOP = r"""
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 10000000;
    void *volatile sink;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (long i = 0; i < n; i++) {
        void *p = malloc((size_t)(16 + (i & 255)));
        sink = p;
        free(p);
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    (void)sink;
    printf("%.3f\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n);
    return 0;
}
"""


def bench_c(build, tmp, repeat, n):
    """ns per malloc+free pair plain and preloaded, or (None, reason)."""
    lib = os.path.join(build, "libspanscope_malloc.so") if build else None
    if not lib or not os.path.exists(lib):
        return None, "no libspanscope_malloc.so under --build"
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not cc:
        return None, "no C compiler"
    src, exe = os.path.join(tmp, "mloop.c"), os.path.join(tmp, "mloop")
    with open(src, "w") as f:
        f.write(C_LOOP)
    r = subprocess.run([cc, "-O2", "-fno-builtin", src, "-o", exe], capture_output=True,
                       text=True)
    if r.returncode:
        return None, "the C loop did not build: " + r.stderr.strip()[:200]
    env_plain = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    env_pre = dict(env_plain, LD_PRELOAD=os.path.abspath(lib))
    out = {"plain": [], "preloaded": []}
    for _ in range(repeat):
        for key, env in (("plain", env_plain), ("preloaded", env_pre)):
            r = subprocess.run([exe, str(n)], capture_output=True, text=True, env=env,
                               timeout=300)
            if r.returncode:
                return None, "the C loop failed: " + r.stderr.strip()[:200]
            out[key].append(float(r.stdout))
    return out, None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=None, help="the CMake build (for libspanscope_malloc)")
    ap.add_argument("--quick", action="store_true", help="fewer iterations and repetitions")
    ap.add_argument("--json", default=None, help="also write the results here")
    ap.add_argument("--n", type=int, default=None, help="loop iterations")
    ap.add_argument("--repeat", type=int, default=None, help="repetitions of each mode")
    args = ap.parse_args(argv)
    n = args.n or (200_000 if args.quick else 1_000_000)
    repeat = args.repeat or (3 if args.quick else 9)
    try:
        from spanscope import _ext
    except ImportError as e:
        print("bench_memhooks: spanscope is not installed (%s)" % e, file=sys.stderr)
        return 2
    if _ext.mem_hooks_active():
        print("bench_memhooks: memory hooks already installed", file=sys.stderr)
        return 2
    per_iter, frees_per_iter = allocs_per_iteration(_ext, n)
    if per_iter <= 0:
        print("bench_memhooks: the hooks counted no allocation in the loop", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="sps-bench-mem-") as tmp:
        modes = make_modes(_ext, tmp)
        timed(n)  # warm up
        for _ in range(repeat):
            for m in modes:
                if m.missing:
                    continue
                m.start and m.start()
                try:
                    t = timed(n)
                finally:
                    m.stop and m.stop()
                m.samples.append(t / n)
                for f in os.listdir(tmp):
                    if f.startswith("memray-"):
                        os.unlink(os.path.join(tmp, f))
        c, c_why = bench_c(args.build, tmp, max(3, repeat // 2),
                           2_000_000 if args.quick else 10_000_000)
    base = modes[0]
    base_best, base_med = min(base.samples), statistics.median(base.samples)
    rows = []
    for m in modes:
        if m.missing:
            rows.append({"mode": m.name, "missing": m.missing})
            continue
        best, med = min(m.samples), statistics.median(m.samples)
        rows.append({"mode": m.name, "ns_per_iter": best, "ns_per_iter_median": med,
                     "added_ns_per_alloc": (best - base_best) / per_iter,
                     "added_ns_per_alloc_median": (med - base_med) / per_iter,
                     "samples": m.samples})
    by = {r["mode"]: r for r in rows}
    ours, tm = by["spanscope hooks"], by["tracemalloc (1 frame)"]
    ratio = ours["added_ns_per_alloc"] / tm["added_ns_per_alloc"] \
        if tm["added_ns_per_alloc"] > 0 else float("nan")
    ratio_med = ours["added_ns_per_alloc_median"] / tm["added_ns_per_alloc_median"] \
        if tm["added_ns_per_alloc_median"] > 0 else float("nan")
    result = {"cpu": cpu_model(), "python": platform.python_version(), "n": n,
              "repeat": repeat, "allocs_per_iter": per_iter, "frees_per_iter": frees_per_iter,
              "rows": rows, "ratio_vs_tracemalloc": ratio,
              "ratio_vs_tracemalloc_median": ratio_med, "target": 0.25,
              "c": c, "c_missing": c_why}

    print("Memory hooks: added cost per Python allocation (issue 33 part 7)")
    print("CPU: %s; CPython %s; loop: object() x %d, %.2f allocations (+ %.2f frees) per "
          "iteration; best of %d (median)" % (result["cpu"], result["python"], n, per_iter,
                                              frees_per_iter, repeat))
    print("%-28s %18s %26s %14s" % ("mode", "ns/iteration", "added ns/allocation",
                                   "x tracemalloc"))
    for r in rows:
        if "missing" in r:
            print("%-28s %s" % (r["mode"], r["missing"]))
            continue
        x = r["added_ns_per_alloc"] / tm["added_ns_per_alloc"] \
            if tm["added_ns_per_alloc"] > 0 else float("nan")
        print("%-28s %8.1f (%7.1f) %12.1f (%9.1f) %14.2f" % (
            r["mode"], r["ns_per_iter"], r["ns_per_iter_median"], r["added_ns_per_alloc"],
            r["added_ns_per_alloc_median"], x if r is not base else 0.0))
    verdict = "met" if ratio <= 0.25 else "NOT met"
    print("spanscope / tracemalloc added cost: %.3f best, %.3f median (target <= 0.25: %s)"
          % (ratio, ratio_med, verdict))
    if c:
        p, q = min(c["plain"]), min(c["preloaded"])
        print("C malloc+free pair: %.1f ns plain, %.1f ns with libspanscope_malloc "
              "preloaded: +%.1f ns (medians %.1f, %.1f)"
              % (p, q, q - p, statistics.median(c["plain"]), statistics.median(c["preloaded"])))
    else:
        print("C malloc+free pair: not measured (%s)" % c_why)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
