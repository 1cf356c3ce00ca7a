#!/usr/bin/env python3
"""Finalize against recording (issue 37 part 4): for the three workloads,
the recording's wall time, finalize's wall time, their ratio and the CPU
finalize took (its thread, and the whole process), medians of --reps fresh
processes, with the machine (CPU model, vCPUs) and the load (uptime's
1-minute average before and after each run: these are shared VMs).

    python bench/finalize_ratio.py [--bench build/bench/bench_core] [--reps 3]
                                   [--scale 1] [--json out.json]
    python bench/finalize_ratio.py --bench OLD/bench_core,NEW/bench_core ...

With several builds (comma-separated), the runs interleave (rep by rep,
workload by workload, build by build), so that the load of a shared
machine falls on all of them alike; a table per build.

Workloads (bench_core's --shape, docs/benchmarks.md, "Finalize against
recording"):
  flat    bench_core big --n 1e8 --shape loop --finalize 1
  nested  bench_core big --n 1e8 --shape nested --finalize 1   (outer{inner})
  threads bench_core many --threads 64 --n 2e6 --shape nested
--scale divides the call counts (a quick look: --scale 10).  Prints a
Markdown table; the target is finalize <= 1.0 x recording.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile


def machine() -> str:
    model = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} vCPUs"


def load1() -> float:
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def run(bench: str, args: list[str], out: str, env: dict) -> dict:
    before = load1()
    p = subprocess.run([bench, *args, "--out", out], capture_output=True, text=True,
                       env=env, check=False)
    if p.returncode:
        sys.exit(f"{bench} {' '.join(args)} failed ({p.returncode}): {p.stderr.strip()}")
    d = json.loads(p.stdout)
    d["load_before"], d["load_after"] = before, load1()
    return d


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bench", default=os.path.join("build", "bench", "bench_core"))
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--only", help="comma-separated: flat,nested,threads")
    ap.add_argument("--json", help="also write every run's figures here")
    o = ap.parse_args(argv)
    if o.reps < 1 or o.scale <= 0:
        ap.error("--reps >= 1 and --scale > 0")
    n = str(int(1e8 / o.scale))
    per = str(int(2e6 / o.scale))
    loads = {
        f"flat ({n} calls)": ["big", "--n", n, "--shape", "loop", "--finalize", "1"],
        f"nested outer{{inner}} ({n} calls)": ["big", "--n", n, "--shape", "nested",
                                                "--finalize", "1"],
        f"64 threads x {per} nested": ["many", "--threads", "64", "--n", per,
                                       "--shape", "nested"],
    }
    keys = dict(zip(["flat", "nested", "threads"], loads))
    if o.only:
        loads = {keys[k]: loads[keys[k]] for k in o.only.split(",")}
    env = dict(os.environ)
    benches = o.bench.split(",")
    results = {b: {name: [] for name in loads} for b in benches}
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "f.h5")
        for _ in range(o.reps):
            for name, args in loads.items():
                for b in benches:
                    results[b][name].append(run(b, args, out, env))
    print(f"machine: {machine()}; {o.reps} runs each, medians")
    for b in benches:
        table(b, results[b])
    if o.json:
        with open(o.json, "w") as f:
            json.dump({"machine": machine(), "results": results}, f, indent=1)
    return 0


def table(bench: str, results: dict) -> None:
    """Prints one build's Markdown table."""
    print()
    print(f"`{bench}`:")
    print()
    print("| workload | record s | finalize s | finalize / record | finalize CPU s "
          "(its thread / process) | analyzed in the background | trials allowed | load |")
    print("|---|---:|---:|---:|---:|---:|---|---|")
    for name, rs in results.items():
        med = lambda k: statistics.median(r[k] for r in rs)  # noqa: E731
        rec = [r.get("record_s") for r in rs]
        ratio = [r["finalize_over_record"] for r in rs]
        cpu_t = med("finalize_cpu_s")
        cpu_p = med("finalize_process_cpu_s")
        trials = [f"{r['bg_allowed']}/{r['bg_trials']}" if r["bg_trials"] >= 0 else "none"
                  for r in rs]
        load = f"{min(r['load_before'] for r in rs):.1f}-{max(r['load_after'] for r in rs):.1f}"
        print(f"| {name} | {statistics.median(rec):.2f} | {med('finalize_s'):.2f} | "
              f"**{statistics.median(ratio):.2f}** ({min(ratio):.2f}-{max(ratio):.2f}) | "
              f"{cpu_t:.2f} / {cpu_p:.2f} | {med('bg_analyzed_pct'):.0f} % | "
              f"{', '.join(trials)} | {load} |")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
