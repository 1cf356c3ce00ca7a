#!/usr/bin/env python3
"""The collective finalize under MPI: finalize time and merged file size at
1, 2, 4 and 8 ranks with a fixed number of calls per rank (``make bench``
runs it through bench/run.py; docs/benchmarks.md has a measured table).

    python bench/bench_mpi.py --build build [--calls N] [--reps R] [--json PATH]

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


if __name__ == "__main__":
    sys.exit(main())
