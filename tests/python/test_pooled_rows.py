"""print_summary's default table pools a file's calls by call path in C
(sps_file_paths, ``_ext.file_paths``) instead of grouping every call in
numpy (issue 12): the rows are region_rows' per-call rows in every column
they fill, on files with nesting, recursion, threads, asyncio tasks (lanes
by task), two ranks, calls that overlap without nesting (a flat table),
and under include/exclude/ranks/sort; the per-call grouping runs only for
std and the percentiles.  The text itself is compared with scope-profiler
in test_summary_text.py, whose default-column cases take this path.

Modelled on scope-profiler's tests/test_results_api.py (print_summary of
read files, with filters and ranks).
"""

import asyncio
import io
import threading

import numpy as np
import pytest

import spanscope
from spanscope import ProfileManager as PM
from spanscope.results import _table as rt

h5py = pytest.importorskip("h5py")
NS = 1_000_000_000
KEYS = ("name", "call_path", "num_ranks", "calls", "total", "coverage", "exclusive", "min",
        "max", "first", "last", "imbalance", "depth", "recursive", "start",
        "parent_coverage", "gpu_total", "gpu_avg")


def _fib(n):
    with PM.region("fib"):
        return n if n < 2 else _fib(n - 1) + _fib(n - 2)


def _nested(path):
    PM.setup(file_path=str(path))
    with PM.region("main"):
        for i in range(4):
            with PM.region("step"):
                with PM.region("work"):
                    sum(range(1000 * (i + 1)))
                with PM.region("io"):
                    pass
        _fib(5)
    with PM.region("work"):
        pass
    PM.region("never")
    PM.finalize(verbose=False)
    return path


def _threads(path):
    PM.setup(file_path=str(path))

    def worker():
        for _ in range(5):
            with PM.region("worker"):
                with PM.region("inner"):
                    sum(range(3000))
    with PM.region("main"):
        ts = [threading.Thread(target=worker) for _ in range(3)]
        [t.start() for t in ts]
        [t.join() for t in ts]
    PM.finalize(verbose=False)
    return path


def _tasks(path):
    PM.setup(file_path=str(path), track_async=True)

    async def job(k):
        with PM.region("job"):
            for _ in range(3):
                with PM.region("await"):
                    await asyncio.sleep(0.001 * k)

    async def main():
        with PM.region("gather"):
            await asyncio.gather(*(job(k) for k in range(1, 4)))
    asyncio.run(main())
    PM.finalize(verbose=False)
    return path


def _schema1(path, rank_regions):
    with h5py.File(path, "w") as f:
        for rank, regions in rank_regions.items():
            rg = f.create_group(f"rank{rank}").create_group("regions")
            for name, (s, e) in regions.items():
                x = rg.create_group(name)
                x.create_dataset("start_times", data=np.asarray(s, dtype=np.int64))
                x.create_dataset("end_times", data=np.asarray(e, dtype=np.int64))
    return path


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("pooled")
    out = {}
    for name, make in (("nested", _nested), ("threads", _threads), ("tasks", _tasks)):
        PM._reset()
        out[name] = make(d / f"{name}.h5")
    PM._reset()
    out["two_ranks"] = _schema1(d / "two_ranks.h5", {
        0: {"scope_profiler.session": ([0], [20 * NS]), "solve": ([2 * NS, 5 * NS],
                                                                  [4 * NS, 8 * NS]),
            "inner": ([2 * NS + 1, 6 * NS], [3 * NS, 7 * NS]), "never": ([], [])},
        1: {"scope_profiler.session": ([0], [18 * NS]), "solve": ([2 * NS, 5 * NS],
                                                                  [6 * NS, 9 * NS]),
            "inner": ([2 * NS + 1], [2 * NS + 5])}})
    out["overlapping"] = _schema1(d / "overlapping.h5", {
        0: {"setup": ([0], [3 * NS]), "solve": ([2 * NS], [6 * NS])}})
    return out


VARIANTS = [{}, {"sort": "total"}, {"sort": "name"}, {"sort": "calls"}, {"sort": "avg"},
            {"include": "work|step|job|await|inner"}, {"exclude": "io|inner|await"},
            {"ranks": [0]}, {"ranks": [1]}, {"percentage_mode": "exclusive"}]


@pytest.mark.parametrize("name", ["nested", "threads", "tasks", "two_ranks", "overlapping"])
@pytest.mark.parametrize("kw", VARIANTS, ids=lambda kw: ",".join(f"{k}={v}" for k, v in
                                                                  kw.items()) or "default")
def test_pooled_rows_are_the_per_call_rows(files, name, kw):
    res = spanscope.read_h5(files[name])
    regions = res.get_regions(include=kw.get("include"), exclude=kw.get("exclude"))
    sel = sorted({k for r in regions for k in r.regions} if kw.get("ranks") is None
                 else kw["ranks"])
    assert rt._pooled_rows(res, regions, sel, "include" in kw or "exclude" in kw) is not None
    fast = rt.region_rows(res, need_distributions=False, **kw)
    slow = rt.region_rows(res, **kw)
    assert [r.get("call_path", r["name"]) for r in fast] == \
        [r.get("call_path", r["name"]) for r in slow]
    for a, b in zip(fast, slow):
        for k in KEYS:
            if isinstance(b.get(k), float):
                assert a[k] == pytest.approx(b[k], rel=1e-12, abs=1e-15), (a["name"], k)
            else:
                assert a.get(k) == b.get(k), (a["name"], k)
        if b["avg"] is not None:
            assert a["avg"] == pytest.approx(b["avg"], rel=1e-9)


def test_tasks_nest_by_task(files):
    """Three jobs awaiting at once on one thread: by task they are siblings
    under no job of another task (by thread they would nest in each other)."""
    rows = rt.region_rows(spanscope.read_h5(files["tasks"]), need_distributions=False)
    paths = {r["call_path"]: r["calls"] for r in rows if "call_path" in r}
    assert paths.get("job") == 3 or paths.get("gather > job") == 3, paths
    assert not any(p.count("job") > 1 for p in paths), paths


def test_overlapping_calls_give_a_flat_table(files):
    rows = rt.region_rows(spanscope.read_h5(files["overlapping"]), need_distributions=False)
    assert rows and not any("call_path" in r for r in rows)


def test_default_print_summary_groups_no_call(files, monkeypatch):
    """The per-call grouping (_rank_paths) runs only for std/percentiles."""
    def no(*a, **k):
        raise AssertionError("grouped every call")
    res = spanscope.read_h5(files["nested"])
    monkeypatch.setattr(rt, "_rank_paths", no)
    out = io.StringIO()
    res.print_summary(stream=out)
    res.print_summary(stream=out, columns=["region", "calls", "total", "avg", "min", "max",
                                           "first", "last", "imbalance", "percent"])
    res.print_summary(stream=out, sort="total", exclude="io")
    assert "fib ↻ (15x)" in out.getvalue()
    with pytest.raises(AssertionError, match="grouped every call"):
        res.print_summary(stream=out, columns=["region", "p95"])
    with pytest.raises(AssertionError, match="grouped every call"):
        res.print_summary(stream=out, sort="std")


def test_results_not_from_a_file_group_per_call(files):
    res = spanscope.read_h5(files["nested"])
    sub = spanscope.ProfilingResults({r.name: r for r in res})  # built in memory
    regions = sub.get_regions()
    assert rt._pooled_rows(sub, regions, [0], False) is None
    out = io.StringIO()
    sub.print_summary(stream=out, title="t")
    assert "fib ↻ (15x)" in out.getvalue()
