#!/usr/bin/env python3
"""Mutation fuzzing of the in-process HDF5 readers (issue: hostile files
never crash the user's program).

Writes N mutated copies of a few seed files (a spanscope recording with
nesting, threads, metadata, and a file scope-profiler 0.7.5 wrote when it
is installed) and reads each one *in a worker process* the way a user's
program does: spanscope.read, spanscope.read_h5 (scope-profiler's reader),
read_h5_summary, print_summary, the timeline readers (convert to Chrome
JSON), merge.  A worker that dies by a signal has crashed "the user's
program": the file it was reading is kept under OUT/crashes/ and counted,
and a fresh worker carries on.  A worker that hangs past --timeout is
killed and counted as a hang.

    python scripts/fuzz_h5_inproc.py --n 100000 --jobs 2 --out /tmp/fz
    python scripts/fuzz_h5_inproc.py --n 300 --seed 1      # what the test runs

A crash can be the late effect of a file read earlier by the same worker
(a heap that libhdf5 corrupted without crashing): the files that worker
read just before are kept under OUT/crashes/<name>.before/ to replay in
order.

Prints a progress line, then "N files, C crashes, H hangs, E clean errors,
K read fine" and exits 1 when C or H is not 0.
"""
from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path


def make_seeds(dirpath: Path) -> list[Path]:
    """The seed files: spanscope recordings (nested, threaded, with
    metadata and source capture) and, when scope-profiler is importable, one
    it wrote."""
    import threading
    import spanscope as sp
    seeds = []
    out = dirpath / "seed_sps.h5"
    sp.ProfileManager.setup(output=str(out), capture_region_source=True)

    def work(k):
        for i in range(30 + k):
            with sp.ProfileManager.region("outer é"):
                with sp.ProfileManager.region(f"inner{i % 3}"):
                    pass
    ts = [threading.Thread(target=work, args=(k,)) for k in range(3)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    sp.ProfileManager.metadata(run="fuzz seed", n=3)
    sp.ProfileManager.finalize(verbose=False)
    seeds.append(out)
    try:
        import scope_profiler as sc
    except Exception:  # noqa: BLE001 - optional
        return seeds
    out2 = dirpath / "seed_scope_profiler.h5"
    sc.ProfileManager.setup(output=str(out2))
    for i in range(40):
        with sc.ProfileManager.region("step"):
            with sc.ProfileManager.region("sub"):
                pass
    sc.ProfileManager.finalize(verbose=False)
    seeds.append(out2)
    return seeds


def mutate(data: bytes, rng: random.Random) -> bytes:
    """One mutated copy: a few random byte flips, overwrites with
    interesting values, a block copied elsewhere, or a truncation."""
    b = bytearray(data)
    for _ in range(rng.choice((1, 1, 2, 3, 5, 10))):
        op = rng.random()
        i = rng.randrange(len(b))
        if op < 0.45:
            b[i] ^= 1 << rng.randrange(8)
        elif op < 0.75:
            v = rng.choice((0, 0xff, 0x7f, 0x80, 1, rng.randrange(256)))
            for k in range(rng.choice((1, 2, 4, 8))):
                if i + k < len(b):
                    b[i + k] = v
        elif op < 0.9:
            j = rng.randrange(len(b))
            n = rng.randrange(1, 64)
            b[j:j + n] = b[i:i + n]
        else:
            del b[rng.randrange(len(b) // 2, len(b)):]
            if not b:
                b = bytearray(data[:8])
    return bytes(b)


def read_all(path: str) -> str:
    """Everything a user's program may do with a file in-process; "ok" or
    the class of the clean error it raised."""
    import io
    import spanscope as sp
    err = None
    sink = io.StringIO()
    for fn in (lambda: sp.read(path),
               lambda: sp.read_h5(path),
               lambda: sp.read_h5_summary(path),
               lambda: sp.read_h5(path).print_summary(stream=sink),
               lambda: sp.inspect_file(path, stream=sink),
               lambda: sp.export_chrome_trace(path, path + ".json"),
               lambda: sp.export_speedscope(path, path + ".speedscope.json"),
               lambda: sp.create_html_report(path, path + ".html")):
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - a clean error is the point
            err = err or type(e).__name__
    return err or "ok"


def worker(list_path: str, done_path: str) -> None:
    """Reads every file named in list_path (one per line), appending
    "verdict path" to done_path as each one ends: the parent learns which
    file a dead worker was reading from the first line missing there."""
    sys.stdout = open(os.devnull, "w")
    with open(list_path) as f:
        todo = f.read().split("\n")
    with open(done_path, "a", buffering=1) as out:
        for path in filter(None, todo):
            out.write(f"{read_all(path)} {path}\n")


#: files kept from before a crash, for replaying a heap corrupted earlier
KEEP_BEFORE = 50


def run_batch(ctx, batch: list[str], jobs: int, timeout: float, out: Path, counts) -> None:
    """Reads the files of batch in jobs worker processes; a worker that dies
    (or hangs past timeout on one file) is replaced, resuming after the
    file it was reading, which is kept under out/crashes."""
    shares = [batch[j::jobs] for j in range(jobs)]
    procs = {}

    def start(j, files):
        lst, dn = out / f"list{j}", out / f"done{j}"
        lst.write_text("\n".join(files))
        dn.write_text("")
        pr = ctx.Process(target=worker, args=(str(lst), str(dn)), daemon=True)
        pr.start()
        procs[j] = (pr, files, dn, time.time(), 0)

    for j, files in enumerate(shares):
        if files:
            start(j, files)
    while procs:
        time.sleep(0.05)
        for j, (pr, files, dn, t_last, ndone) in list(procs.items()):
            lines = dn.read_text().splitlines()
            if len(lines) > ndone:
                t_last, ndone = time.time(), len(lines)
                procs[j] = (pr, files, dn, t_last, ndone)
            alive = pr.is_alive()
            hung = alive and time.time() - t_last > timeout
            if alive and not hung:
                continue
            if hung:
                pr.kill()
            pr.join()
            for ln in lines:
                counts["ok" if ln.startswith("ok ") else "error"] += 1
            rest = files[len(lines):]
            del procs[j]
            if not rest:
                continue
            bad = rest[0]
            kind = "hang" if hung else "crash"
            counts[kind] += 1
            tag = "hang" if hung else f"sig{-pr.exitcode if pr.exitcode else 0}"
            shutil.copy(bad, out / "crashes" / f"{Path(bad).stem}.{tag}.h5")
            # the files this worker read before it: a crash can be the late
            # effect of a heap one of them corrupted (replay them in order)
            before = out / "crashes" / f"{Path(bad).stem}.before"
            before.mkdir(exist_ok=True)
            done_files = files[:len(lines)]
            for k, prev in enumerate(done_files[-KEEP_BEFORE:]):
                shutil.copy(prev, before / f"{k:03d}-{Path(prev).name}")
            if rest[1:]:
                start(j, rest[1:])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=300, help="mutated files (default 300)")
    ap.add_argument("--jobs", type=int, default=max(1, (os.cpu_count() or 2) - 0))
    ap.add_argument("--seed", type=int, default=12345)
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per file before a hang")
    ap.add_argument("--out", default=None, help="keep crashing inputs here (default: a temp dir)")
    ap.add_argument("--batch", type=int, default=2000, help="files written at a time")
    a = ap.parse_args(argv)
    out = Path(a.out or tempfile.mkdtemp(prefix="fuzz_h5_"))
    (out / "crashes").mkdir(parents=True, exist_ok=True)
    work = out / "work"
    work.mkdir(exist_ok=True)
    ctx = mp.get_context("spawn")
    seeds = ctx.Pool(1).apply(make_seeds, (work,))
    blobs = [p.read_bytes() for p in seeds]
    rng = random.Random(a.seed)
    counts = {"crash": 0, "hang": 0, "error": 0, "ok": 0}
    done = 0
    t0 = time.time()
    while done < a.n:
        batch = []
        for k in range(min(a.batch, a.n - done)):
            p = work / f"m{done + k}.h5"
            p.write_bytes(mutate(blobs[rng.randrange(len(blobs))], rng))
            batch.append(str(p))
        run_batch(ctx, batch, a.jobs, a.timeout, out, counts)
        for p in batch:
            for f in (p, p + ".json", p + ".speedscope.json", p + ".html"):
                try:
                    os.unlink(f)
                except OSError:
                    pass
        done += len(batch)
        print(f"\r{done}/{a.n} files, {time.time() - t0:.0f} s: {counts['crash']} crashes, "
              f"{counts['hang']} hangs", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    print(f"{a.n} files, {counts['crash']} crashes, {counts['hang']} hangs, "
          f"{counts['error']} clean errors, {counts['ok']} read fine "
          f"(crashing inputs: {out / 'crashes'})")
    return 1 if counts["crash"] or counts["hang"] else 0


if __name__ == "__main__":
    sys.exit(main())
