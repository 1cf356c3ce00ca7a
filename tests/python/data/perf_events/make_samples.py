"""Writes the perf-event sample files of tests/python/test_perf_events.py
with scope-profiler 0.7.5 itself (its ProfileManager, its HDF5 writer), so
that spanscope's reader is tested on files the original wrote.

Run it with a Python that has scope-profiler 0.7.5 (not spanscope):

    python3.11 -m venv /tmp/perfvenv
    /tmp/perfvenv/bin/pip install scope-profiler==0.7.5
    /tmp/perfvenv/bin/python tests/python/data/perf_events/make_samples.py

Files (next to this script), each with expected.json beside them: what
scope-profiler's own read_h5 reads from them (calls and counts per region
per rank), which the test compares spanscope's reading with.
  sw_counters.h5   a real recording on Linux: perf_events=["task-clock",
                   "page-faults", "context-switches"] (the software
                   counters any Linux machine has, VMs included), nested
                   and repeated regions, one of them faulting pages in
  hw_two_ranks.h5  hardware counters as scope-profiler's writer stores
                   them (ProfilingWriter, two ranks: cycles, instructions,
                   cache-references, cache-misses, branches, branch-misses),
                   written from fixed totals because the VMs these samples
                   were made on have no PMU; rank 1 lacks branch events
  no_counters.h5   the same kind of recording without perf_events
"""

import json
import os
import sys

import numpy as np

import scope_profiler
from scope_profiler import ProfileManager
from scope_profiler.h5writer import ProfilingWriter
from scope_profiler.perf_events import PerfEventTotals
from scope_profiler.profile_manager import RankPayload
from scope_profiler.results import ProfilingResults

HERE = os.path.dirname(os.path.abspath(__file__))
assert scope_profiler.__version__ == "0.7.5", scope_profiler.__version__
assert "spanscope" not in sys.modules


def record(path, perf_events):
    if os.path.exists(path):
        os.remove(path)
    kw = {"perf_events": perf_events} if perf_events else {}
    ProfileManager.setup(file_path=path, **kw)
    for _ in range(3):
        with ProfileManager.profile_region("outer"):
            with ProfileManager.profile_region("touch_pages"):
                # 2 MiB of fresh pages: page faults in this region
                buf = np.ones(1 << 18, dtype=np.float64)
                buf.sum()
                del buf
            with ProfileManager.profile_region("spin"):
                x = 0
                for i in range(20000):
                    x += i * i
    with ProfileManager.profile_region("once"):
        pass
    ProfileManager.finalize(verbose=False)


def write_hw(path):
    if os.path.exists(path):
        os.remove(path)
    totals = {
        0: {"compute": PerfEventTotals(4, {"cycles": 4_000_000, "instructions": 9_000_000,
                                           "cache-references": 50_000, "cache-misses": 5_000,
                                           "branches": 1_000_000, "branch-misses": 20_000}),
            "stream": PerfEventTotals(2, {"cycles": 6_000_000, "instructions": 3_000_000,
                                          "cache-references": 400_000, "cache-misses": 200_000,
                                          "branches": 100_000, "branch-misses": 1_000})},
        1: {"compute": PerfEventTotals(4, {"cycles": 4_400_000, "instructions": 9_100_000,
                                           "cache-references": 52_000,
                                           "cache-misses": 6_500})},
    }
    with ProfilingWriter(path, repack=True) as writer:
        for rank in (0, 1):
            regions = {name: (np.asarray([1_000 * (k + 1) for k in range(t.calls)], np.int64),
                              np.asarray([1_000 * (k + 1) + 500 for k in range(t.calls)],
                                         np.int64))
                       for name, t in totals[rank].items()}
            writer.write_rank(rank, RankPayload(regions=regions, likwid={},
                                                likwid_environment={},
                                                perf_events=totals[rank]))


def expected(path):
    res = ProfilingResults.from_h5(path)
    return {"has_perf_events": bool(res.has_perf_events),
            "ranks": {str(rank): {name: {"calls": t.calls, "values": t.values}
                                  for name, t in regions.items()}
                      for rank, regions in res.get_perf_events().items()}}


def main():
    files = {
        "sw_counters.h5": lambda p: record(p, ["task-clock", "page-faults", "context-switches"]),
        "hw_two_ranks.h5": write_hw,
        "no_counters.h5": lambda p: record(p, None),
    }
    out = {}
    for name, make in files.items():
        path = os.path.join(HERE, name)
        make(path)
        out[name] = expected(path)
    with open(os.path.join(HERE, "expected.json"), "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")
    print(json.dumps(out, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
