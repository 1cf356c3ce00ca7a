"""Timeline benchmarks: convert (and merge) a recording of N spans, with wall
time, peak resident memory of the command, and bytes per span per format.

    python bench/bench_timeline.py --build build [--spans 1e7] [--json out.json]

Peak memory is the child's own ru_maxrss (os.wait4), so each command is
measured alone.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time


def run(cmd):
    """Runs cmd; returns (seconds, peak RSS in MiB)."""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    dt = time.monotonic() - t0
    if status != 0:
        sys.exit(f"bench_timeline: {' '.join(map(str, cmd))} failed ({status})")
    return dt, ru.ru_maxrss / 1024.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--spans", type=float, default=1e7)
    ap.add_argument("--json")
    a = ap.parse_args()
    n = int(a.spans)
    cli = os.path.join(a.build, "spanscope")
    rec = os.path.join(a.build, "bench", "bench_record")
    rows = []
    with tempfile.TemporaryDirectory(prefix="sps-tl-") as d:
        h5 = os.path.join(d, "rec.h5")
        t, m = run([rec, str(n), h5, "2", "0", "2"])
        rows.append(("record + finalize to .h5", n, t, m, os.path.getsize(h5)))
        for ext in (".pftrace", ".json.gz", ".json"):
            out = os.path.join(d, "rec" + ext)
            t, m = run([cli, "convert", h5, out])
            rows.append((f"convert .h5 -> {ext}", n, t, m, os.path.getsize(out)))
            if ext != ".json":
                back = os.path.join(d, "back.json.gz" if ext == ".pftrace" else "back.pftrace")
                t, m = run([cli, "convert", out, back])
                rows.append((f"convert {ext} -> {os.path.splitext(back)[1] if ext == '.json.gz' else '.json.gz'}",
                             n, t, m, os.path.getsize(back)))
                os.unlink(back)
        merge = os.path.join(cli)
        if subprocess.run([merge, "merge", "--help"], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode == 0:
            h5b = os.path.join(d, "rec_b.h5")
            run([rec, str(n // 2), h5b, "2", "1", "2"])
            for ext in (".pftrace", ".h5"):
                out = os.path.join(d, "merged" + ext)
                t, m = run([cli, "merge", "-o", out, h5, h5b])
                rows.append((f"merge 2 recordings -> {ext}", n + n // 2, t, m, os.path.getsize(out)))
    print(f"Timelines: {n:.0e} spans (2 threads, 3 regions, 2 levels)")
    w = max(len(r[0]) for r in rows)
    print(f"{'benchmark':<{w}}  {'spans':>10}  {'time s':>7}  {'peak MiB':>8}  {'B/span':>7}")
    for name, k, t, m, size in rows:
        print(f"{name:<{w}}  {k:>10}  {t:7.2f}  {m:8.1f}  {size / k:7.2f}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump([dict(zip(("benchmark", "spans", "seconds", "peak_mib", "bytes"), r))
                       for r in rows], f, indent=1)


if __name__ == "__main__":
    main()
