#!/usr/bin/env python3
"""Start-up cost of linking spanscope: an empty program against the same
program linked with libspanscope (and with libspanscope_mpi), wall time, CPU
time, peak RSS and the number of shared objects loaded.

    python bench/bench_startup.py --build build [--runs 50] [--json PATH]

The variants are compiled from bench/bench_startup.c against the libraries
of BUILD (any spanscope build directory, an older one included: that is how
docs/mpi.md's before/after figures were taken), with an rpath to BUILD.
Every round runs each variant once, in a rotating order, after 3 warm-up
rounds; each run is one posix_spawn + wait4, whose rusage gives the child's
CPU time.  The table shows the median (and the best) over the rounds: these
are shared, noisy VMs.  Peak RSS is what the program reads as its own VmHWM
at exit (median of 5 more runs): a spawned child's ru_maxrss includes the
spawning Python process's memory from before the exec.  Standard library
only.
"""
import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def find_lib(build, stem):
    """BUILD's lib<stem>.so (the link name CMake writes beside the
    versioned file), or None."""
    p = os.path.join(build, "lib%s.so" % stem)
    return p if os.path.exists(p) else None


def variants(build):
    """(name, extra cc arguments, program arguments) of every variant this
    build can make."""
    libdir = os.path.abspath(build)
    inc = ["-I" + os.path.join(ROOT, "include")]
    rpath = ["-L" + libdir, "-Wl,-rpath," + libdir]
    out = [("uninstrumented", ["-DSPS_BENCH_NONE"], ["now"]),
           ("libspanscope, one call", inc + rpath + ["-lspanscope"], ["now"]),
           ("libspanscope, empty session", inc + rpath + ["-lspanscope"],
            ["session"])]
    if find_lib(build, "spanscope_mpi"):
        # --no-as-needed: the program calls nothing of it, and the linker
        # would drop it otherwise (what an MPI program that links it gets)
        out.append(("libspanscope + libspanscope_mpi linked",
                    inc + rpath + ["-Wl,--no-as-needed", "-lspanscope_mpi",
                                   "-Wl,--as-needed", "-lspanscope"], ["now"]))
    return out


def compile_all(build, tmp, cc):
    src = os.path.join(HERE, "bench_startup.c")
    progs = []
    for k, (name, flags, args) in enumerate(variants(build)):
        exe = os.path.join(tmp, "startup%d" % k)
        cmd = shlex.split(cc) + ["-O2", "-std=gnu11", src, "-o", exe] + flags
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode:
            sys.exit("bench_startup: %s failed:\n%s" % (" ".join(cmd), p.stderr))
        progs.append((name, exe, args))
    return progs


def run_once(exe, args):
    """(wall ms, CPU ms) of one run of exe."""
    t0 = time.perf_counter_ns()
    pid = os.posix_spawn(exe, [exe] + args, os.environ)
    _, status, ru = os.wait4(pid, 0)
    wall = (time.perf_counter_ns() - t0) / 1e6
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit("bench_startup: %s %s failed (status %d)" % (exe, " ".join(args), status))
    return wall, (ru.ru_utime + ru.ru_stime) * 1e3


def footprint(exe, args):
    """(shared objects loaded, median peak RSS in KiB over 5 runs)."""
    got = []
    for _ in range(5):
        p = subprocess.run([exe] + args + ["--count"], capture_output=True, text=True,
                           check=True)
        n, hwm = (int(x) for x in p.stdout.split())
        got.append((n, hwm))
    return got[0][0], statistics.median(h for _, h in got)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build", help="spanscope build directory")
    ap.add_argument("--runs", type=int, default=50, help="timed rounds (default 50)")
    ap.add_argument("--json", help="write every sample here")
    ap.add_argument("--cc", default=os.environ.get("CC", "cc"), help="C compiler")
    a = ap.parse_args()
    if not find_lib(a.build, "spanscope"):
        sys.exit("bench_startup: no libspanscope.so in %s: build first" % a.build)
    with tempfile.TemporaryDirectory(prefix="spanscope-startup-") as tmp:
        progs = compile_all(a.build, tmp, a.cc)
        samples = {name: [] for name, _, _ in progs}
        for r in range(3 + a.runs):
            k = r % len(progs)  # rotate who goes first
            for name, exe, args in progs[k:] + progs[:k]:
                s = run_once(exe, args)
                if r >= 3:
                    samples[name].append(s)
        feet = {name: footprint(exe, args) for name, exe, args in progs}

    rows = []
    for name, _, _ in progs:
        xs = samples[name]
        rows.append({
            "variant": name, "objects": feet[name][0],
            "wall_ms_median": statistics.median(x[0] for x in xs),
            "wall_ms_min": min(x[0] for x in xs),
            "cpu_ms_median": statistics.median(x[1] for x in xs),
            "maxrss_mib_median": feet[name][1] / 1024.0,
            "samples": [[round(v, 4) for v in x] for x in xs]})
    print("start-up of an empty program, %d runs each (%s)" % (a.runs, os.path.abspath(a.build)))
    w = max(len(r["variant"]) for r in rows)
    print("%-*s  %7s  %11s  %9s  %10s  %12s" % (w, "variant", "objects", "wall median",
                                               "wall best", "CPU median", "max RSS"))
    print("-" * (w + 60))
    for r in rows:
        print("%-*s  %7d  %8.2f ms  %6.2f ms  %7.2f ms  %8.1f MiB" % (
            w, r["variant"], r["objects"], r["wall_ms_median"], r["wall_ms_min"],
            r["cpu_ms_median"], r["maxrss_mib_median"]))
    base, one = rows[0], rows[1]
    print("linking libspanscope: %+.2f ms wall (median), %+.1f MiB max RSS, %+d shared objects"
          % (one["wall_ms_median"] - base["wall_ms_median"],
             one["maxrss_mib_median"] - base["maxrss_mib_median"],
             one["objects"] - base["objects"]))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"build": os.path.abspath(a.build), "runs": a.runs, "rows": rows}, f,
                      indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
