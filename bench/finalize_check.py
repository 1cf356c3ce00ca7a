#!/usr/bin/env python3
"""Checks that a change to finalize keeps the written files' content: the
decoded /events columns (and every other dataset) of a file, as sha256
digests of their values, so that two files of the same recording can be
compared whatever their compression or chunk layout.

    python bench/finalize_check.py digest FILE.h5 [--json OUT]
    python bench/finalize_check.py compare A.h5 B.h5
    python bench/finalize_check.py same A.json B.json   (two saved digests)

`digest` prints one line per dataset: path, shape, dtype, sha256 of the
values (C order, little endian).  `compare` digests both files and exits 1
naming every dataset whose values differ (or that only one file has).
Attributes that hold times or sizes of the run itself (the file's own
creation time, the finalize's duration) are not compared: only datasets.

    python bench/finalize_check.py record OLD_BENCH_CORE NEW_BENCH_CORE [--n 3e6]

The same recording twice gives different times, so `record` makes the
recording deterministic: it builds a small LD_PRELOAD library whose
clock_gettime returns a counter that advances 20-83 ns a call (a
function of the call's number)
(SPANSCOPE_CLOCK=monotonic, so the recorders read it too), runs
`bench_core disk --shape nested` and `--shape loop` (default configuration:
spilled past 32 MiB) with each of the two builds, and compares every
dataset of the two files but the recording process's thread ids (the OS's
tids).  Two runs of one build give identical files this way, so any
difference is the build's.  SPANSCOPE_BG_ANALYSIS=0 keeps the spill
writer's clock reads out of the counter's sequence.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys

import numpy as np


def digest(path: str, columns: list[str] | None = None) -> dict[str, dict]:
    """Returns {dataset path: {"shape", "dtype", "sha256"}} for every dataset
    of the file (or only the /events columns named in columns)."""
    import h5py

    out: dict[str, dict] = {}

    def visit(name, obj):
        if not isinstance(obj, h5py.Dataset):
            return
        if columns is not None:
            if not name.startswith("events/") or name.split("/", 1)[1] not in columns:
                return
        data = obj[()]
        if isinstance(data, np.ndarray) and data.dtype.kind not in "OSU":
            arr = np.ascontiguousarray(data)
            if arr.dtype.byteorder == ">":
                arr = arr.astype(arr.dtype.newbyteorder("<"))
            h = hashlib.sha256(arr.tobytes()).hexdigest()
        else:
            h = hashlib.sha256(repr(np.asarray(data).tolist()).encode()).hexdigest()
        out[name] = {"shape": list(np.shape(data)), "dtype": str(obj.dtype), "sha256": h}

    with h5py.File(path, "r") as f:
        f.visititems(visit)
    return out


def differences(a: dict, b: dict) -> list[str]:
    """The dataset paths whose digests differ between two digests."""
    bad = []
    for k in sorted(set(a) | set(b)):
        if k not in a or k not in b:
            bad.append(f"{k}: only in {'second' if k in b else 'first'}")
        elif a[k] != b[k]:
            bad.append(f"{k}: {a[k]} != {b[k]}")
    return bad


FAKE_CLOCK = r"""
#define _GNU_SOURCE
#include <stdint.h>
#include <time.h>
static uint64_t g_ns = 1000000000ull, g_calls;
int clock_gettime(clockid_t id, struct timespec *ts) {
    uint64_t v;
    if (id == CLOCK_MONOTONIC || id == CLOCK_MONOTONIC_RAW || id == CLOCK_REALTIME ||
        id == CLOCK_BOOTTIME) { /* steps of 20..83 ns, a function of the call's number */
        uint64_t c = __atomic_add_fetch(&g_calls, 1, __ATOMIC_RELAXED) * 0x9E3779B97F4A7C15ull;
        v = __atomic_add_fetch(&g_ns, 20 + (c >> 58), __ATOMIC_RELAXED);
    } else {
        v = __atomic_load_n(&g_ns, __ATOMIC_RELAXED);
    }
    ts->tv_sec = (time_t)(v / 1000000000ull);
    ts->tv_nsec = (long)(v % 1000000000ull);
    return 0;
}
"""

# the recording process's own identity: differs run to run
PROCESS_SPECIFIC = ("thread_table/ident", "thread_table/native_id")


def record(old: str, new: str, n: int) -> int:
    """Records the same deterministic run with two bench_core builds and
    compares the files; 0 when every dataset is the same."""
    import os
    import subprocess
    import tempfile

    bad = 0
    with tempfile.TemporaryDirectory() as d:
        src, so = os.path.join(d, "fake_clock.c"), os.path.join(d, "fake_clock.so")
        with open(src, "w") as f:
            f.write(FAKE_CLOCK)
        subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", so, src], check=True)
        env = dict(os.environ, SPANSCOPE_CLOCK="monotonic", SPANSCOPE_BG_ANALYSIS="0",
                   LD_PRELOAD=so)
        for shape in ("nested", "loop"):
            files = []
            for k, bench in enumerate((old, new)):
                out = os.path.join(d, f"{shape}{k}.h5")
                subprocess.run([bench, "disk", "--shape", shape, "--n", str(n), "--out", out],
                               env=env, check=True, stdout=subprocess.DEVNULL, timeout=600)
                files.append(digest(out))
                sizes = getattr(record, "sizes", [])
                sizes.append(os.path.getsize(out))
                record.sizes = sizes
            for f in files:
                for k in PROCESS_SPECIFIC:
                    f.pop(k, None)
            diff = differences(*files)
            nev = sum(1 for k in files[0] if k.startswith("events/"))
            print(f"{shape}: {len(files[0])} datasets ({nev} /events columns), "
                  f"{len(diff)} differ; file bytes {record.sizes[-2]} / {record.sizes[-1]}")
            for line in diff:
                print("  " + line)
            bad += len(diff)
    return 1 if bad else 0


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("cmd", choices=["digest", "compare", "same", "record"])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--json", help="digest: also write the digest here")
    ap.add_argument("--columns", help="only these /events columns (comma-separated)")
    ap.add_argument("--n", type=float, default=3e6, help="record: calls per shape")
    o = ap.parse_args(argv)
    cols = o.columns.split(",") if o.columns else None
    if o.cmd == "digest":
        if len(o.files) != 1:
            ap.error("digest takes one file")
        d = digest(o.files[0], cols)
        for k, v in d.items():
            print(f"{k}\t{v['shape']}\t{v['dtype']}\t{v['sha256']}")
        if o.json:
            with open(o.json, "w") as fp:
                json.dump(d, fp, indent=1, sort_keys=True)
        return 0
    if len(o.files) != 2:
        ap.error(f"{o.cmd} takes two files")
    if o.cmd == "record":
        return record(o.files[0], o.files[1], int(o.n))
    if o.cmd == "compare":
        a, b = digest(o.files[0], cols), digest(o.files[1], cols)
    else:
        with open(o.files[0]) as fa, open(o.files[1]) as fb:
            a, b = json.load(fa), json.load(fb)
    bad = differences(a, b)
    for line in bad:
        print(line)
    print(f"{len(a)} datasets, {len(bad)} differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
