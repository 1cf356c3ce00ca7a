#!/usr/bin/env python3
"""The region pair with NVTX emission on (issue 38 part 7, docs/nvtx-itt.md).

    python bench/bench_emit.py --build build [--procs 7] [--reps 11] [--n 1000000]

Runs build/bench/bench_core's pair, interleaved in fresh processes of one
run: the time-only pair (--mode events), the pair with SPS_EMIT_NVTX on and
no tool attached (--mode emit_nvtx: the emitter finds no tool at its first
begin and goes idle), the same with the test NVTX tool told to do nothing
(NVTX_INJECT_NOOP=1: what an attached tool costs the emitter itself), and
with the test tool recording every range (build/tests/c/
libsps_nvtx_inject.so: a lock and a gettid per push and pop).  Prints the medians over every
repetition and the ratios to the time-only pair (target, no tool attached:
<= 1.1).  bench/run.py (`make bench`) measures the same rows in its table.
Standard library only.
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--procs", type=int, default=7, help="fresh processes per case")
    ap.add_argument("--reps", type=int, default=11, help="batches per process")
    ap.add_argument("--n", type=int, default=1000000, help="pairs per batch")
    ap.add_argument("--core", help="the bench_core to run (default BUILD/bench/bench_core)")
    a = ap.parse_args()
    core = a.core or os.path.join(a.build, "bench", "bench_core")
    tool = os.path.abspath(os.path.join(a.build, "tests", "c", "libsps_nvtx_inject.so"))
    if not os.access(core, os.X_OK):
        sys.exit("bench_emit.py: %s not found: build first" % core)
    cases = [("time-only pair", "events", None),
             ("emit_nvtx pair, no tool attached", "emit_nvtx", None)]
    if os.path.exists(tool):
        cases.append(("emit_nvtx pair, a tool whose push/pop do nothing", "emit_nvtx",
                      tool + ":noop"))
        cases.append(("emit_nvtx pair, test NVTX tool (records every range)", "emit_nvtx",
                      tool))
    else:
        print("bench_emit.py: %s not built: the tool's row is left out" % tool, file=sys.stderr)
    samples = {name: [] for name, _m, _t in cases}
    for _ in range(a.procs):
        for name, mode, inj in cases:  # interleaved: the same load for each
            env = dict(os.environ)
            env.pop("NVTX_INJECTION64_PATH", None)
            env.pop("NVTX_INJECT_NOOP", None)
            if inj:
                path, _, how = inj.partition(":")
                env["NVTX_INJECTION64_PATH"] = path
                if how == "noop":
                    env["NVTX_INJECT_NOOP"] = "1"
            out = subprocess.run([core, "pair", "--mode", mode, "--threads", "1",
                                  "--n", str(a.n), "--reps", str(a.reps)],
                                 env=env, capture_output=True, text=True)
            if out.returncode:
                sys.exit("bench_emit.py: bench_core --mode %s failed: %s"
                         % (mode, out.stderr.strip()))
            res = json.loads(out.stdout)
            samples[name].extend(res["ns"])
    base = statistics.median(samples["time-only pair"])
    print("CPU: %s (%d CPUs), %d processes x %d batches x %d pairs per case"
          % (cpu_model(), os.cpu_count(), a.procs, a.reps, a.n))
    print("| case | ns per pair (median) | x time-only pair |")
    print("|---|---:|---:|")
    for name, _m, _t in cases:
        v = statistics.median(samples[name])
        print("| %s | %.1f | %.2f |" % (name, v, v / base))
    nv = statistics.median(samples["emit_nvtx pair, no tool attached"])
    print("target (no tool attached <= 1.1 x): %s (%.3f x)"
          % ("met" if nv / base <= 1.1 else "NOT met", nv / base))


if __name__ == "__main__":
    main()
