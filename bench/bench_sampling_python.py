"""What stack sampling at 1 kHz costs a CPU-bound Python loop (issue 34;
docs/sampling.md): the same loop of regions, a few Python calls deep, runs
with sampling off and on, alternately, in one process; the table gives the
medians of its wall time and of the process's CPU time (with the sampler
thread), and the overhead against the unsampled runs of the same process.
The budget (issue 34): <= 2 % of run time.

    python bench/bench_sampling_python.py [--ms N] [--reps N] [--hz N] [--json PATH]
"""
import argparse
import json
import platform
import statistics
import time

from spanscope import _ext


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def leaf(x, n):
    for i in range(n):
        x = (x * 1103515245 + 12345) & 0xFFFFFFFF
    return x


def mid(x, n):
    return leaf(x, n) ^ 1


def loop(iters, region):
    x = 1
    t0 = time.perf_counter_ns()
    for _ in range(iters):
        with region:
            x = mid(x, 200)
    return time.perf_counter_ns() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ms", type=int, default=200)
    ap.add_argument("--reps", type=int, default=31)
    ap.add_argument("--hz", type=int, default=1000)
    ap.add_argument("--json")
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    if a.quick:
        a.ms, a.reps = 100, 11
    _ext.setup()
    region = _ext.region_new("step")
    iters = 100
    t = loop(iters, region)
    while t < 50e6:  # warm up and calibrate on at least 50 ms
        iters *= 2
        t = loop(iters, region)
    iters = max(1, int(iters * a.ms * 1e6 / max(t, 1)))
    wall_off, wall_on, cpu_off, cpu_on, thr_off, thr_on, taken = [], [], [], [], [], [], []

    def run(sampling):
        before = _ext.sampling_stats()["taken"]
        if sampling:
            _ext.sampling_start(a.hz)
        c0, t0 = time.process_time_ns(), time.thread_time_ns()
        wall = loop(iters, region)
        thr = time.thread_time_ns() - t0
        cpu = time.process_time_ns() - c0
        if sampling:
            _ext.sampling_stop()
            taken.append(_ext.sampling_stats()["taken"] - before)
        _ext.finalize(None, 0)  # each run's period dropped (no file) alike
        (wall_on if sampling else wall_off).append(wall)
        (cpu_on if sampling else cpu_off).append(cpu)
        (thr_on if sampling else thr_off).append(thr)

    for k in range(a.reps):  # ABBA: neither kind always runs first
        for sampling in ((False, True) if k % 2 == 0 else (True, False)):
            run(sampling)
    _ext.shutdown()
    wo, wn = statistics.median(wall_off), statistics.median(wall_on)
    co, cn = statistics.median(cpu_off), statistics.median(cpu_on)
    to, tn = statistics.median(thr_off), statistics.median(thr_on)
    rows = {
        "cpu": cpu_model(), "python": platform.python_version(), "hz": a.hz,
        "iters": iters, "reps": a.reps,
        "wall_off_ms": wo / 1e6, "wall_on_ms": wn / 1e6,
        "wall_overhead_pct": 100.0 * (wn - wo) / wo,
        "thread_off_ms": to / 1e6, "thread_on_ms": tn / 1e6,
        "thread_overhead_pct": 100.0 * (tn - to) / to,
        "cpu_off_ms": co / 1e6, "cpu_on_ms": cn / 1e6,
        "cpu_overhead_pct": 100.0 * (cn - co) / co,
        "samples_per_run": statistics.median(taken),
    }
    print(f"Stack sampling at {a.hz} Hz: a CPU-bound Python loop of {iters} regions "
          f"(~{a.ms} ms), median of {a.reps} runs each, alternating (ABBA)")
    print(f"  CPU: {rows['cpu']}; CPython {rows['python']}")
    print(f"  {'':34} {'off':>12} {'sampling':>12} {'overhead':>10}")
    print(f"  {'loop wall time':34} {wo / 1e6:9.1f} ms {wn / 1e6:9.1f} ms "
          f"{rows['wall_overhead_pct']:+9.2f} %")
    print(f"  {'loop thread CPU (with its handler)':34} {to / 1e6:9.1f} ms {tn / 1e6:9.1f} ms "
          f"{rows['thread_overhead_pct']:+9.2f} %")
    print(f"  {'process CPU (with sampler thread)':34} {co / 1e6:9.1f} ms {cn / 1e6:9.1f} ms "
          f"{rows['cpu_overhead_pct']:+9.2f} %")
    print(f"  {'samples per run (entries)':34} {rows['samples_per_run']:12.0f}")
    if rows["samples_per_run"]:
        print(f"  {'thread CPU per sample entry':34} "
              f"{(tn - to) / rows['samples_per_run'] / 1e3:9.2f} us")
    print("  budget (issue 34): <= 2 % of run time")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
