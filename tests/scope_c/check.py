"""Reads what test_api.c, example.c and example.f90 wrote, with h5py and
scope-profiler's own readers (read_h5, read_trace, load_traces): the files of
spanscope's scope-profiler C/Fortran face must be scope-profiler's files.
Usage: check.py DIR [example|fortran]..."""
import sys
from pathlib import Path

import h5py
import numpy as np
from scope_profiler import read_h5
from scope_profiler.native_samples import line_profile, read_samples
from scope_profiler.native_trace import load_traces, read_trace

d = Path(sys.argv[1])
what = sys.argv[2:] or ["api"]


def names(path):
    with h5py.File(path) as f:
        assert f.attrs["scope_profiler_schema"] == 3, path
        return sorted(v.decode() for v in f["region_table/names"][()])


def example(path):
    r = read_h5(path)
    assert sorted(r.region_names) == ["assemble", "checkpoint", "fib_call", "fibonacci", "solve"]
    assert r["solve"].num_calls == 20 and r["assemble"].num_calls == 20
    assert r["checkpoint"].num_calls == 2 and r["fib_call"].num_calls == 465
    # the recursion nests: every fib_call lies inside the fibonacci call
    fib = r["fibonacci"].regions[0]
    calls = r["fib_call"].regions[0]
    assert (calls.start_times_ns >= fib.start_times_ns[0]).all()
    assert (calls.end_times_ns <= fib.end_times_ns[0]).all()
    assert load_traces(path.parent)["solve"].num_calls == 20  # import-native's reader


if "api" in what:
    g = read_h5(d / "global_rank00003.h5")
    assert sorted(g.region_names) == ["burn", "fib", "inner", "outer"], g.region_names
    # line sampling: scope-profiler's own reader and symbolizer (addr2line)
    # read the .sps; burn's samples land in burn_cpu (or the work it calls)
    sf = read_samples(d / "global_rank00003.sps")
    assert sf.rank == 3 and sf.hz == 1000 and "burn" in sf.regions, sf.regions
    lines = line_profile(sf)["burn"]
    total = sum(s.samples for s in lines)
    assert total > 100, total  # 150 ms at 1 kHz
    ours = sum(s.samples for s in lines if s.function in ("burn_cpu", "work"))
    assert ours > 0.8 * total, lines[:5]
    assert g["outer"].num_calls == 5 and g["inner"].num_calls == 4  # the open one ended later
    assert g["fib"].num_calls == 177
    assert sorted(g["outer"].regions) == [3]  # the rank sp_init was given
    outer = g["outer"].regions[3]
    assert outer.source_file.endswith("test_api.c") and outer.source_lineno > 0
    fib = g["fib"].regions[3]
    assert fib.start_times_ns.min() == fib.start_times_ns[0]
    assert fib.end_times_ns.max() == fib.end_times_ns[0]
    assert g.metadata["label"] == "global"
    # two contexts: two files, one "solve" each, their own counts and ranks
    a, b = read_h5(d / "ctx_a_rank00000.h5"), read_h5(d / "ctx_b_rank00001.h5")
    assert a.region_names == ["solve"] and a["solve"].num_calls == 1
    assert b.region_names == ["solve"] and b["solve"].num_calls == 2
    assert sorted(b["solve"].regions) == [1]
    for f, rank in (("global_rank00003.h5", 3), ("ctx_b_rank00001.h5", 1), ("ctx_a_rank00000.h5", 0)):
        with h5py.File(d / f) as h:  # both writers: the rank spanscope merge reads
            assert h["metadata"].attrs["rank"] == rank, f
            assert h["metadata"].attrs["mpi_size"] == rank + 1, f
    # the flush before reset (h5) and the period after it (trace)
    c = read_h5(d / "checked_rank00000.h5")
    assert sorted(c.region_names) == ["ctx_region", "plain", "solve"]
    assert c["solve"].num_calls == 2 and c["plain"].num_calls == 1
    solve = c["solve"].regions[0]
    assert solve.source_file == "solver.c" and solve.source_lineno == 42
    assert c["plain"].regions[0].source_file == "plain.c"
    rank, regions = read_trace(d / "checked_rank00000.spt")
    assert rank == 0 and list(regions) == ["solve"]
    starts, ends = regions["solve"]
    assert len(starts) == 1 and (ends >= starts).all()
    assert regions["solve"].source_file == "solver.c" and regions["solve"].source_lineno == 42
    assert starts[0] > solve.end_times_ns.max()  # after the reset
    # open at finalize: left out; the other profiler's "r" is its own
    m = read_h5(d / "misuse_rank00000.h5")
    assert m.region_names == []
    assert read_h5(d / "misuse_other_rank00000.h5")["r"].num_calls == 1
    assert read_h5(d / "empty_rank00000.h5").get_regions() == []
    assert names(d / "twice_rank00001.h5") == []
    assert not (d / "no").exists()
    t = read_h5(d / "threads_rank00000.h5")
    assert t["t_outer"].num_calls == 4000 and t["t_inner"].num_calls == 4000
    with h5py.File(d / "threads_rank00000.h5") as f:
        assert len(set(f["events/thread_ids"][()].tolist())) == 4  # one lane per thread
    stack = t.call_stack(rank=0)
    depth = {}
    for call in stack:
        depth.setdefault(call["name"], set()).add(call["depth"])
    assert depth == {"t_outer": {0}, "t_inner": {1}}, depth  # nested per thread
    j = read_h5(d / "joined_rank00000.h5")
    assert j.region_names == ["joined_region"]
    s = read_h5(d / "session.h5")  # the session's own file: both faces' regions
    assert sorted(s.region_names) == ["joined_region", "own_region"], s.region_names
    print("check.py: api files read by h5py, read_h5 and read_trace")
if "fortran_api" in what:
    f = read_h5(d / "ftrace_rank00000.h5")  # the last write: the period after reset
    assert sorted(f.region_names) == ["named", "recursive"]
    assert f["recursive"].num_calls == 1 and f["named"].num_calls == 1
    rec = f["recursive"].regions[0]
    assert rec.source_file == "solver.f90" and rec.source_lineno == 42
    s = read_h5(d / "fstats_rank00002.h5")
    assert s.region_names == ["closed"] and sorted(s["closed"].regions) == [2]
    retried = read_h5(d / "no/such/dir/f_rank00000.h5")  # finalize retried
    assert retried.region_names == ["r"] and retried["r"].num_calls == 1
    p = read_h5(d / "fsps.h5")
    assert p.region_names == ["sps_loop"] and p["sps_loop"].num_calls == 10
    assert p.metadata["label"] == "fortran"
    print("check.py: the Fortran modules' files read by read_h5")
if "cxx" in what:
    c = read_h5(d / "cxx_rank00000.h5")
    assert c.region_names == ["guarded"] and c["guarded"].num_calls == 5
    m = read_h5(d / "mpi_rank00000.h5")
    fn = [n for n in m.region_names if "solve" in n]
    assert len(fn) == 1 and m[fn[0]].num_calls == 2, m.region_names
    assert m["inner"].num_calls == 2
    assert m[fn[0]].regions[0].source_file.endswith("test_cxx.cpp")
    assert "mpi:send kind=point-to-point bytes=32 peer=2 root=-1 tag=9 comm=7" in m.region_names
    assert any("mpi:barrier kind=collective bytes=0" in n for n in m.region_names)
    assert any("mpi:wait kind=wait" in n and "request=isend" in n for n in m.region_names)
    print("check.py: the C++ guards' and MPI wrappers' files read by read_h5")
if "example" in what:
    example(d / "profile_rank00000.h5")
    print("check.py: example.c's file read by read_h5 and load_traces")
if "fortran" in what:
    example(d / "profile_rank00000.h5")
    print("check.py: example.f90's file read by read_h5 and load_traces")
