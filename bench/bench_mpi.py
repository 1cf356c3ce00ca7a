#!/usr/bin/env python3
"""The collective finalize under MPI: finalize time and merged file size at
1, 2, 4 and 8 ranks with a fixed number of calls per rank (``make bench``
runs it through bench/run.py; docs/benchmarks.md has a measured table).

    python bench/bench_mpi.py --build build [--calls N] [--reps R] [--json PATH]
    python bench/bench_mpi.py --build build --scale [--calls N] [--max-ranks 64]
                              [--merge copy|events|both]

--scale (issue 37 part 3): 1 to 64 ranks, C calls per rank fixed, rank 0's
CPU time and peak memory in the finalize against the middle ranks' (the
median of ranks 1..R-1), as ratios measured in each run; with --merge both
(the default) each R is run with the chunk-copy merge and again with the
event-by-event merge (SPANSCOPE_MPI_MERGE=events), the reference.

Drives BUILD/bench/bench_mpi under ``mpirun -n K --oversubscribe`` (a build
with MPI; skipped with a note otherwise).  Ranks beyond the CPU count share
cores, so at 8 ranks on 2 CPUs the time includes waiting for the CPU.
Standard library only.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

RANKS = (1, 2, 4, 8)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--calls", type=int, default=300000,
                    help="calls recorded per rank before each finalize")
    ap.add_argument("--reps", type=int, default=5, help="finalizes per run")
    ap.add_argument("--json", help="where to write the results")
    ap.add_argument("--scale", action="store_true",
                    help="rank 0 against the middle ranks at 1..--max-ranks ranks")
    ap.add_argument("--max-ranks", type=int, default=64)
    ap.add_argument("--merge", choices=("copy", "events", "both"), default="both",
                    help="--scale: which merge of the collective finalize")
    a = ap.parse_args()
    exe = os.path.join(a.build, "bench", "bench_mpi")
    mpirun = shutil.which("mpirun") or shutil.which("mpiexec")
    if not os.access(exe, os.X_OK) or not mpirun:
        print("MPI finalize: not measured (%s)" % (
            "no mpirun" if not mpirun else "built without MPI"))
        return 0
    env = dict(os.environ)
    env.setdefault("OMPI_MCA_mpi_yield_when_idle", "1")
    if os.geteuid() == 0:
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    if a.scale:
        return scale(a, exe, mpirun, env)
    results = []
    print("MPI collective finalize: %d calls per rank, %d finalizes per run, "
          "%s CPUs" % (a.calls, a.reps, os.cpu_count()))
    print("%-6s %14s %14s %14s %12s" % ("ranks", "median (ms)", "min (ms)",
                                        "file (MiB)", "B per call"))
    # first row: one process with SPANSCOPE_MPI=0, i.e. the plain finalize
    # (no per-rank file, no merge): the baseline the MPI rows compare with
    # last row: 8 ranks with compressed parts (SPANSCOPE_MPI_PART=compressed),
    # the hand-over as it was before plain parts, measured in the same run
    for k in (0,) + RANKS + ("8c",):
        n = 8 if k == "8c" else max(k, 1)
        with tempfile.TemporaryDirectory() as d:
            cmd = [mpirun, "-n", str(n), "--oversubscribe", exe, d,
                   str(a.calls), str(a.reps)]
            e = dict(env, SPANSCOPE_MPI="0") if k == 0 else env
            if k == "8c":
                e = dict(env, SPANSCOPE_MPI_PART="compressed")
            p = subprocess.run(cmd, capture_output=True, text=True, env=e,
                               timeout=600)
            if p.returncode:
                print("ranks %d: failed (%d): %s" % (k, p.returncode,
                                                     p.stderr.strip()[-300:]))
                return 1
            r = json.loads(p.stdout.strip().splitlines()[-1])
        t = r["finalize_s"][1:] or r["finalize_s"]  # the first one warms up
        r["median_s"] = statistics.median(t)
        r["min_s"] = min(t)
        results.append(r)
        r["mpi"] = k != 0
        r["ranks"] = n
        r["parts"] = "compressed" if k == "8c" else "plain"
        print("%-6s %14.1f %14.1f %14.2f %12.2f" % (
            k or "1*", r["median_s"] * 1e3, r["min_s"] * 1e3, r["file_bytes"] / 2**20,
            r["file_bytes"] / (n * a.calls)), flush=True)
    print("(1*: one process, SPANSCOPE_MPI=0: the finalize without per-rank "
          "file and merge; 8c: 8 ranks, parts compressed)")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"calls_per_rank": a.calls, "reps": a.reps,
                       "cpus": os.cpu_count(), "runs": results}, f, indent=1)
    return 0


def scale(a, exe, mpirun, env):
    """The --scale table: per R, rank 0's finalize CPU seconds and peak RSS
    against the middle ranks' (median of ranks 1..R-1; R = 1: itself)."""
    print("MPI finalize scaling: %d calls per rank, %d finalizes, %s CPUs "
          "(ranks beyond them share cores; CPU time is each rank's own)" % (
              a.calls, a.reps, os.cpu_count()))
    print("%-6s %-7s %11s %11s %8s %11s %11s %8s %11s" % (
        "ranks", "merge", "r0 CPU s", "mid CPU s", "ratio", "r0 MiB", "mid MiB", "ratio",
        "wall ms"))
    rows = []
    modes = ("copy", "events") if a.merge == "both" else (a.merge,)
    runs = []
    r = 1
    while r <= a.max_ranks:
        runs += [(r, m) for m in modes]
        r *= 2
    for r, mode in runs:
        with tempfile.TemporaryDirectory() as d:
            cmd = [mpirun, "-n", str(r), "--oversubscribe", exe, d, str(a.calls), str(a.reps)]
            p = subprocess.run(cmd, capture_output=True, text=True,
                               env=dict(env, SPANSCOPE_MPI_MERGE=mode), timeout=1800)
            if p.returncode:
                print("ranks %d: failed (%d): %s" % (r, p.returncode, p.stderr.strip()[-300:]))
                return 1
            x = json.loads(p.stdout.strip().splitlines()[-1])
        cpu, rss = x["cpu_s"], [v / 1024 for v in x["maxrss_kib"]]
        mid_cpu = statistics.median(cpu[1:]) if r > 1 else cpu[0]
        mid_rss = statistics.median(rss[1:]) if r > 1 else rss[0]
        wall = statistics.median(x["finalize_s"][1:] or x["finalize_s"]) * 1e3
        row = {"ranks": r, "merge": mode, "r0_cpu_s": cpu[0], "mid_cpu_s": mid_cpu,
               "r0_mib": rss[0], "mid_mib": mid_rss, "wall_ms": wall}
        rows.append(row)
        print("%-6d %-7s %11.3f %11.3f %8.2f %11.1f %11.1f %8.2f %11.1f" % (
            r, mode, cpu[0], mid_cpu, cpu[0] / mid_cpu if mid_cpu else float("nan"), rss[0],
            mid_rss, rss[0] / mid_rss if mid_rss else float("nan"), wall), flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"calls_per_rank": a.calls, "reps": a.reps, "cpus": os.cpu_count(),
                       "scale": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
