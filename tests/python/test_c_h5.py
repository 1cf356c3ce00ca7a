"""Reads back the HDF5 files the C tests (tests/c/test_*.c) leave in their
scratch directory, with plain h5py and with scope-profiler's own reader.

The files are produced by `ctest` (run it first; `make check` does).  The
directory is $SPS_BUILD/tests/c/tmp (SPS_BUILD defaults to <repo>/build).  A
missing file is skipped with the reason, not an error.
"""
import os
from pathlib import Path

import numpy as np
import pytest

import spanscope

h5py = pytest.importorskip("h5py")
scope_profiler = pytest.importorskip("scope_profiler")

REPO = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("SPS_BUILD", REPO / "build"))
TMP = BUILD / "tests" / "c" / "tmp"

# Columnar files written by spanscope in the C tests (test program in brackets).
COLUMNAR = [
    "core_known.h5",      # test_core
    "core_cp1.h5",        # test_core (checkpoints)
    "core_cp2.h5",
    "core_cp3.h5",
    "threads.h5",         # test_threads
    "thr_exit1.h5",
    "thr_exit2.h5",
    "spill.h5",           # test_spill
    "deep.h5",            # test_misuse
    "many_names.h5",
    "names.h5",
    "nonutf8.h5",
    "misuse_epath.h5",
    "fork_parent.h5",     # test_fork
    "fork_child.h5",
]
AGGREGATE = ["core_aggregate.h5"]

INDEX_COLUMNS = [
    "region_ids", "ranks", "event_offsets", "event_counts", "source_lines",
    "exclusive_totals", "source_files", "source_texts", "tags",
    "event_metadata", "summary_statistics",
]
SUMMARY_FIELDS = [
    "total", "minimum", "maximum", "first", "last", "start_minimum",
    "end_maximum", "gpu_count", "gpu_total", "mean", "m2",
]
METADATA = [
    "start_time_ns", "finalize_time_ns", "hostname", "pid",
    "spanscope_version", "threads", "timestamp", "platform", "rank",
    "mpi_size", "dropped_events", "misuse_count", "open_calls",
]


def path_of(name):
    p = TMP / name
    if not p.exists():
        pytest.skip(f"{p} is missing: run ctest first (the C tests write it)")
    return p


def to_str(v):
    return v.decode("utf-8") if isinstance(v, (bytes, np.bytes_)) else str(v)


def near(a, b, rel=1e-3, abs_=1000.0):
    return abs(float(a) - float(b)) <= rel * abs(float(b)) + abs_


class H5:
    """The columns of one file, decoded with h5py (names strictly UTF-8)."""

    def __init__(self, path):
        with h5py.File(path, "r") as f:
            self.attrs = dict(f.attrs)
            self.meta = dict(f["metadata"].attrs)
            # strict UTF-8: raises on a name that is not valid UTF-8
            raw = f["region_table/names"][()]
            self.names = [bytes(n).decode("utf-8") if isinstance(n, (bytes, np.bytes_))
                          else str(n) for n in raw]
            ix = f["rank_region_index"]
            self.index_keys = set(ix.keys())
            self.region_ids = ix["region_ids"][()]
            self.offsets = ix["event_offsets"][()].astype(np.int64)
            self.counts = ix["event_counts"][()].astype(np.int64)
            self.excl = ix["exclusive_totals"][()]
            self.summary = ix["summary_statistics"][()]
            self.agg = {k: ix[k][()] for k in ix.keys() if k.startswith("aggregate_")}
            ev = f["events"]
            self.event_keys = set(ev.keys())
            self.deltas = ev["start_deltas"][()]
            self.durations = ev["durations"][()]
            self.call_ids = ev["call_ids"][()] if "call_ids" in ev else None
            self.parent_ids = ev["parent_ids"][()] if "parent_ids" in ev else None
            self.thread_ids = ev["thread_ids"][()] if "thread_ids" in ev else None
            self.thread_table = ({k: f["thread_table"][k][()] for k in f["thread_table"]}
                                 if "thread_table" in f else None)
        # a name can appear twice: "" and "(empty)", or two byte strings
        # that both become U+FFFD; name_id keeps the ids of each
        self.name_id = {}
        for i, n in enumerate(self.names):
            self.name_id.setdefault(n, []).append(i)
        self.row_of = {int(rid): r for r, rid in enumerate(self.region_ids)}
        self.starts = np.zeros(len(self.durations), dtype=np.int64)
        for off, cnt in zip(self.offsets, self.counts):
            self.starts[off:off + cnt] = np.cumsum(self.deltas[off:off + cnt])

    def row(self, name):
        rows = [self.row_of[i] for i in self.name_id[name] if i in self.row_of]
        assert len(rows) <= 1, f"{name!r} has {len(rows)} rows"
        return rows[0] if rows else None

    def count(self, name):
        return sum(int(self.counts[self.row_of[i]])
                   for i in self.name_id.get(name, []) if i in self.row_of)

    def slice(self, name):
        r = self.row(name)
        return slice(int(self.offsets[r]), int(self.offsets[r] + self.counts[r]))


# --------------------------------------------------------------------------
# Every file: structure, consistency, metadata
# --------------------------------------------------------------------------

@pytest.mark.parametrize("name", COLUMNAR + AGGREGATE)
def test_structure_and_metadata(name):
    h = H5(path_of(name))
    assert int(h.attrs["scope_profiler_schema"]) == 3
    layout = to_str(h.attrs["storage_layout"])
    assert layout == ("aggregate" if name in AGGREGATE else "columnar")
    assert set(INDEX_COLUMNS) <= h.index_keys
    assert {"start_deltas", "durations"} <= h.event_keys
    assert list(h.summary.dtype.names) == SUMMARY_FIELDS
    n = len(h.region_ids)
    for col in (h.offsets, h.counts, h.excl, h.summary):
        assert len(col) == n
    assert np.all(h.region_ids < len(h.names))
    assert len(set(h.region_ids.tolist())) == n  # one row per region (rank 0)
    for key in METADATA:
        assert key in h.meta, f"/metadata lacks {key}"
    assert int(h.meta["start_time_ns"]) > 0
    assert int(h.meta["start_time_ns"]) <= int(h.meta["finalize_time_ns"])
    assert int(h.meta["pid"]) > 0
    assert to_str(h.meta["spanscope_version"]) == spanscope.__version__
    assert len(to_str(h.meta["hostname"])) > 0
    threads = int(h.meta["threads"])
    assert threads >= 0
    if h.thread_table is not None:
        assert len(h.thread_table["index"]) == threads
        assert sorted(h.thread_table["index"].tolist()) == list(range(threads))


@pytest.mark.parametrize("name", COLUMNAR)
def test_events_consistent(name):
    h = H5(path_of(name))
    nev = len(h.durations)
    assert len(h.deltas) == nev
    # rows tile /events exactly
    order = np.argsort(h.offsets, kind="stable")
    pos = 0
    for r in order:
        if h.counts[r] == 0:
            continue
        assert h.offsets[r] == pos
        pos += h.counts[r]
    assert pos == nev == int(h.counts.sum())
    assert np.all(h.durations >= 0)
    for off, cnt in zip(h.offsets, h.counts):
        if cnt:
            d = h.deltas[off:off + cnt]
            assert d[0] > 0  # absolute CLOCK_MONOTONIC ns
            assert np.all(d[1:] >= 0)  # start order within a row
    # a call can start before its period (open across a checkpoint), never after
    if nev:
        assert h.starts.max() <= int(h.meta["finalize_time_ns"])
        assert np.max(h.starts + h.durations) <= int(h.meta["finalize_time_ns"]) + 1000
    # call ids unique, parent ids -1 or a containing call on the same thread
    assert h.call_ids is not None and h.parent_ids is not None and h.thread_ids is not None
    assert len(np.unique(h.call_ids)) == nev
    assert np.all(h.thread_ids >= 0)
    assert np.all(h.thread_ids < max(int(h.meta["threads"]), 1))
    has_parent = np.nonzero(h.parent_ids >= 0)[0]
    assert np.all((h.parent_ids >= 0) | (h.parent_ids == -1))
    sort_ids = np.argsort(h.call_ids)
    sorted_ids = h.call_ids[sort_ids]
    k = np.searchsorted(sorted_ids, h.parent_ids[has_parent])
    assert np.all(k < nev), "a parent id that is no call of the file"
    p = sort_ids[k]
    assert np.all(sorted_ids[k] == h.parent_ids[has_parent]), "a parent id that is no call of the file"
    c = has_parent
    assert np.all(h.thread_ids[p] == h.thread_ids[c])
    assert np.all(h.starts[p] <= h.starts[c])
    assert np.all(h.starts[p] + h.durations[p] >= h.starts[c] + h.durations[c])
    assert np.all(h.call_ids[p] < h.call_ids[c])


@pytest.mark.parametrize("name", COLUMNAR)
def test_summary_matches_durations(name):
    h = H5(path_of(name))
    # direct children's durations, per parent event
    child_sum = np.zeros(len(h.durations), dtype=np.float64)
    has_parent = np.nonzero(h.parent_ids >= 0)[0]
    if len(has_parent):
        sort_ids = np.argsort(h.call_ids)
        p = sort_ids[np.searchsorted(h.call_ids[sort_ids], h.parent_ids[has_parent])]
        np.add.at(child_sum, p, h.durations[has_parent])
    for r in range(len(h.region_ids)):
        cnt = int(h.counts[r])
        s = h.summary[r]
        if cnt == 0:
            continue
        sl = slice(int(h.offsets[r]), int(h.offsets[r]) + cnt)
        d = h.durations[sl].astype(np.float64)
        st = h.starts[sl]
        label = f"{name} row {r} ({h.names[h.region_ids[r]][:40]!r})"
        assert near(s["total"], d.sum(), 1e-3, 100.0 * cnt), label
        assert near(s["minimum"], d.min(), 1e-3, 200), label
        assert near(s["maximum"], d.max(), 1e-3, 200), label
        assert near(s["mean"], d.mean(), 1e-3, 200), label
        assert near(s["mean"] * cnt, s["total"], 1e-6, 2 * cnt), label
        if cnt > 1:
            m2 = ((d - d.mean()) ** 2).sum()
            assert near(np.sqrt(s["m2"] / (cnt - 1)), np.sqrt(m2 / (cnt - 1)), 0.05, 300), label
        assert near(s["start_minimum"], st.min(), 0, 1000), label
        assert near(s["end_maximum"], (st + h.durations[sl]).max(), 0, 1000), label
        # the call with the earliest start (any of them, on a tie)
        assert np.any(np.abs(d[st == st.min()] - s["first"]) <= 200 + 1e-3 * d.max()), label
        assert np.any(np.abs(d[st == st.max()] - s["last"]) <= 200 + 1e-3 * d.max()), label
        assert int(s["gpu_count"]) == 0
        excl = (d - child_sum[sl]).sum()
        if st.min() >= int(h.meta["start_time_ns"]):
            assert near(h.excl[r], excl, 1e-3, 1000 + 2 * cnt), label
        else:
            # a call open across a checkpoint: some of its children are in
            # the previous file, and its self time excludes them too
            assert 0 <= h.excl[r] <= excl + 1000 + 2 * cnt, label


@pytest.mark.parametrize("name", COLUMNAR + AGGREGATE)
def test_scope_profiler_reader(name):
    p = path_of(name)
    h = H5(p)
    res = scope_profiler.read_h5(str(p))
    rows = {h.names[h.region_ids[r]] for r in range(len(h.region_ids))}
    assert rows <= set(res.region_names)
    assert set(res.region_names) <= set(h.names)
    if name in AGGREGATE:
        for r in range(len(h.region_ids)):
            nm = h.names[h.region_ids[r]]
            assert res[nm][0].num_calls == int(h.agg["aggregate_counts"][r])
        return
    for nm in res.region_names:
        if len(h.name_id[nm]) > 1:
            continue  # two regions written with one name: ambiguous by name
        cnt = h.count(nm)
        if cnt == 0:  # registered, no calls in this period
            assert not res[nm].regions or res[nm][0].num_calls == 0
            continue
        reg = res[nm][0]
        assert reg.num_calls == cnt
        sl = h.slice(nm)
        np.testing.assert_array_equal(np.asarray(reg.durations_ns), h.durations[sl])
        np.testing.assert_array_equal(np.asarray(reg.start_times_ns), h.starts[sl])
        np.testing.assert_array_equal(np.asarray(reg.parent_ids), h.parent_ids[sl])
        assert np.all(np.asarray(reg.durations_ns) >= 0)


# --------------------------------------------------------------------------
# What each test wrote
# --------------------------------------------------------------------------

def test_core_known():
    h = H5(path_of("core_known.h5"))
    assert h.count("core.parent") == 6
    assert h.count("core.child") == 12
    par, kid = h.slice("core.parent"), h.slice("core.child")
    assert np.all(h.durations[par] >= 2_000_000 - 50_000)
    assert np.all(h.durations[kid] >= 500_000 - 50_000)
    # each parent holds exactly two children
    pids = h.parent_ids[kid]
    assert sorted(pids.tolist()) == sorted(np.repeat(h.call_ids[par], 2).tolist())
    assert to_str(h.meta["label"]) == "core_known"
    assert int(h.meta["threads"]) == 1


def test_checkpoint_files():
    h1, h2 = H5(path_of("core_cp1.h5")), H5(path_of("core_cp2.h5"))
    assert (h1.count("cp.a"), h1.count("cp.kid"), h1.count("cp.open")) == (10, 3, 0)
    assert (h2.count("cp.a"), h2.count("cp.kid"), h2.count("cp.open")) == (5, 2, 1)
    assert int(h1.meta["open_calls"]) == 1
    # the open call began in period 1 and is written, whole, in period 2
    so = h2.starts[h2.slice("cp.open")][0]
    assert so < int(h1.meta["finalize_time_ns"]) < so + h2.durations[h2.slice("cp.open")][0]
    assert int(h1.meta["finalize_time_ns"]) <= int(h2.meta["start_time_ns"]) + 1000


def test_threads_file():
    h = H5(path_of("threads.h5"))
    assert h.count("thr.all") == 16 * 100_000
    for k in range(16):
        assert h.count(f"thr.t{k:02d}") == 10_000
    assert int(h.meta["threads"]) == 16
    tid = h.thread_ids[h.slice("thr.all")]
    assert np.bincount(tid, minlength=16).tolist() == [100_000] * 16


def test_spill_file():
    h = H5(path_of("spill.h5"))
    assert h.count("spill.a") == 1_000_000
    assert h.count("spill.b") == 10_000


def test_deep_file():
    h = H5(path_of("deep.h5"))
    sl = h.slice("deep.r")
    ids, pids = h.call_ids[sl], h.parent_ids[sl]
    assert len(ids) == 10_000
    assert pids[0] == -1
    np.testing.assert_array_equal(pids[1:], ids[:-1])
    assert np.all(np.diff(h.durations[sl]) <= 0)


def test_names_file():
    h = H5(path_of("names.h5"))
    assert "(empty)" in h.names
    assert "x" * 4096 in h.names
    assert all(len(n.encode()) <= 4096 + 8 for n in h.names)
    assert "bad\ufffd\ufffd-name" in h.names
    assert "ok-\u20ac-\U0001F600" in h.names


def test_nonutf8_file():
    p = path_of("nonutf8.h5")
    h = H5(p)
    assert h.count("caf\ufffd-latin1") == 3
    assert h.count("bad\ufffd\ufffd-name") == 3
    res = scope_profiler.read_h5(str(p))
    assert res["caf\ufffd-latin1"][0].num_calls == 3


def test_nonutf8_bad_lead_bytes():
    """Regression test (see tests/c/test_misuse.c test_name_bad_lead_bytes):
    bytes 0xF5..0xFF followed by continuation bytes are written as they are,
    so the names are not valid UTF-8 and h5py cannot decode them."""
    p = path_of("nonutf8_lead.h5")
    with h5py.File(p, "r") as f:
        raw = [bytes(n) for n in f["region_table/names"][()]]
    bad = []
    for n in raw:
        try:
            n.decode("utf-8")
        except UnicodeDecodeError:
            bad.append(n)
    assert not bad, f"REGRESSION: names in {p.name} are not valid UTF-8: {bad}"


def test_epath_file():
    h = H5(path_of("misuse_epath.h5"))
    assert h.count("epath.a") == 15
    assert h.count("epath.open") == 1


def test_many_names_file():
    h = H5(path_of("many_names.h5"))
    assert len(h.region_ids) == 100_000
    assert np.all(h.counts == 1)
    rows = sorted(h.names[i] for i in h.region_ids)
    assert rows == [f"many.{i:06d}" for i in range(100_000)]


def test_fork_files():
    hp, hc = H5(path_of("fork_parent.h5")), H5(path_of("fork_child.h5"))
    assert hp.count("fork.parent") == 200_001
    assert hp.count("fork.child.only") == 0
    assert "fork.child.only" not in hp.names
    assert hc.count("fork.child.only") == 50_000
    assert hc.count("fork.parent") == 0
    assert int(hp.meta["pid"]) != int(hc.meta["pid"])


def test_aggregate_file():
    h = H5(path_of("core_aggregate.h5"))
    assert len(h.durations) == 0
    assert np.all(h.counts == 0)
    counts = {h.names[h.region_ids[r]]: int(h.agg["aggregate_counts"][r])
              for r in range(len(h.region_ids))}
    assert counts == {"agg.parent": 6, "agg.child": 12, "agg.threads": 40_000}
    r = h.row("agg.parent")
    assert h.agg["aggregate_totals"][r] == h.summary[r]["total"]
    assert h.agg["aggregate_totals"][r] >= 6 * 2_000_000 - 6 * 50_000
    assert near(h.agg["aggregate_exclusives"][r],
                h.summary[r]["total"] - h.summary[h.row("agg.child")]["total"], 0, 10)
