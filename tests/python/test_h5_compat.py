"""Files written by spanscope's HDF5 writer read with plain h5py and with
scope-profiler's own reader.

tests/c/test_h5w.c leaves $SPS_TEST_TMP/h5w_compat.h5 (and a few others)
behind: the known recording

    main  [1000, 2000)
      solve [1100, 1300)   solve [1400, 1700)
      io    [1800, 1850)

on rank 0, one thread, with call_ids/parent_ids/thread_ids.  Run the C
tests first (ctest); these tests are skipped when the files are missing.
"""
import json
import os
import pathlib

import numpy as np
import pytest

h5py = pytest.importorskip("h5py")

HERE = pathlib.Path(__file__).parent
BUILD = pathlib.Path(os.environ.get("SPS_BUILD", HERE.parent.parent / "build"))
TMP = pathlib.Path(os.environ.get("SPS_TEST_TMP", BUILD / "tests" / "c" / "tmp"))


def c_file(name):
    path = TMP / name
    if not path.exists():
        pytest.skip(f"{path} missing: run the C tests (test_h5w) first")
    return path


def test_layout_with_plain_h5py():
    with h5py.File(c_file("h5w_compat.h5"), "r") as f:
        assert int(f.attrs["scope_profiler_schema"]) == 3
        assert f.attrs["storage_layout"] == "columnar"
        assert set(f) >= {"events", "metadata", "rank_region_index", "region_table"}
        names = [n.decode() for n in f["region_table/names"][()]]
        assert names == ["main", "solve", "io", "unused"]
        idx = f["rank_region_index"]
        want = {
            "region_ids": "<u4", "ranks": "<u4", "event_offsets": "<u8",
            "event_counts": "<u8", "source_lines": "<i8", "exclusive_totals": "<i8",
        }
        for col, dt in want.items():
            assert idx[col].dtype == np.dtype(dt), col
        for col in ("source_files", "source_texts", "tags", "event_metadata"):
            info = h5py.check_string_dtype(idx[col].dtype)
            assert info is not None and info.encoding == "utf-8" and info.length is None
        assert [json.loads(t) for t in idx["tags"].asstr()[()]] == [[], [], []]
        summary = idx["summary_statistics"]
        assert summary.dtype.names == (
            "total", "minimum", "maximum", "first", "last", "start_minimum",
            "end_maximum", "gpu_count", "gpu_total", "mean", "m2")
        assert summary.dtype.itemsize == 88
        assert list(summary["total"]) == [1000, 500, 50]
        assert list(idx["event_counts"][()]) == [1, 2, 1]
        ev = f["events"]
        for col in ("start_deltas", "durations", "call_ids", "parent_ids", "thread_ids"):
            assert ev[col].dtype == np.dtype("<i8"), col
        assert list(ev["durations"][()]) == [1000, 200, 300, 50]
        assert list(ev["start_deltas"][()]) == [1000, 1100, 300, 1800]
        assert list(ev["parent_ids"][()]) == [-1, 0, 0, 0]
        meta = f["metadata"].attrs
        assert int(meta["start_time_ns"]) == 900
        assert int(meta["finalize_time_ns"]) == 2100
        assert meta["label"] == "known"
        assert int(meta["mpi_size"]) == 1
        tt = f["thread_table"]
        assert tt["name"].asstr()[0] == "main"
        assert int(tt["native_id"][0]) == 4242


def test_scope_profiler_reads_our_file():
    sp = pytest.importorskip("scope_profiler")
    res = sp.read_h5(str(c_file("h5w_compat.h5")))
    assert list(res.region_names) == ["main", "solve", "io", "unused"]
    solve = res["solve"][0]
    assert solve.num_calls == 2
    assert list(solve.durations_ns) == [200, 300]
    assert list(solve.start_times_ns) == [1100, 1400]  # decoded from the deltas
    assert list(solve.end_times_ns) == [1300, 1700]
    assert list(solve.parent_ids) == [0, 0]
    assert res["main"][0].num_calls == 1
    assert res["io"][0].num_calls == 1
    assert res.metadata["label"] == "known"


def test_scope_profiler_reads_compressed_and_empty_files():
    sp = pytest.importorskip("scope_profiler")
    big = sp.read_h5(str(c_file("h5w_big.h5")))
    hot = big["hot"][0]
    assert hot.num_calls == 200000
    assert (hot.durations_ns == np.arange(200000) % 1000).all()
    empty = sp.read_h5(str(c_file("h5w_empty.h5")))
    assert list(empty.region_names) == []


def test_scope_profiler_reads_aggregate_file():
    sp = pytest.importorskip("scope_profiler")
    res = sp.read_h5(str(c_file("h5w_aggregate.h5")))
    assert list(res.region_names) == ["tick", "tock"]
    assert res["tick"][0].num_calls == 1000000


def test_scope_profiler_summary_reader():
    sp = pytest.importorskip("scope_profiler")
    from scope_profiler.h5reader import read_h5_summary

    res = read_h5_summary(str(c_file("h5w_compat.h5")), fallback=False)
    assert res["solve"][0].num_calls == 2
