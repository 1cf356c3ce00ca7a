"""scope-profiler's results API on spanscope (issue 12, part 4).

Modelled on how scope-profiler 0.7.5's users and its own tests
(scope_profiler/tests/test_results_api.py, test_json_export.py,
test_compatibility_fixtures.py) call it.  Files written by the real
scope-profiler (in a child process: track_threads, track_async,
aggregation_mode, capture_region_source, recursion, its JSON) are read by
spanscope.read_h5 / read_json and must give the same numbers as
scope_profiler.read_h5 / read_json; spanscope's files and JSON are read by
the real scope-profiler with the same numbers.
"""
import base64
import gzip
import json
import pathlib
import sys
import textwrap

import numpy as np
import pytest

import spanscope
from sample_files import run_script, write_schema1
from spanscope import MPIRegion, ProfileManager, ProfilingResults, Region, read_h5

sp_ref = pytest.importorskip("scope_profiler")
h5py = pytest.importorskip("h5py")

NS = 1_000_000_000

# --------------------------------------------------------------------------
# files written by the real scope-profiler
# --------------------------------------------------------------------------

_GEN = textwrap.dedent('''
    import asyncio, sys, threading
    from scope_profiler import ProfileManager as PM
    import scope_profiler as sp
    out, mode = sys.argv[1], sys.argv[2]
    kw = {"threads": dict(track_threads=True), "async": dict(track_async=True),
          "agg": dict(aggregation_mode=True), "src": dict(capture_region_source=True)}
    PM.setup(file_path=out + ".h5", label="run-" + mode, **kw.get(mode, {}))

    def fib(n):
        with PM.region("fib"):
            return n if n < 2 else fib(n - 1) + fib(n - 2)

    def work():
        for i in range(4):
            with PM.region("step"):
                with PM.region("assemble", tags=("golden",)):
                    sum(range(2000 * (i + 1)))
                with PM.region("solve"):
                    sum(range(500))
    work()
    if mode == "plain":
        fib(5)
    if mode == "threads":
        t = threading.Thread(target=work, name="worker"); t.start(); t.join()
    if mode == "async":
        async def task(k):
            with PM.region("atask"):
                await asyncio.sleep(0.001 * k)
        async def main():
            await asyncio.gather(task(1), task(2))
        asyncio.run(main())
    res = PM.finalize(verbose=False, return_results=True)
    if mode == "plain":
        sp.write_json(sp.read_h5(out + ".h5"), out + ".json")
        sp.write_json(sp.read_h5(out + ".h5"), out + ".json.gz")
''')

MODES = ("plain", "threads", "async", "agg", "src")


@pytest.fixture(scope="module")
def sp_files(tmp_path_factory):
    """{mode: path stem} of files the real scope-profiler 0.7.5 wrote."""
    d = tmp_path_factory.mktemp("scope_profiler_files")
    run_script(_GEN, d, [(d / mode, mode) for mode in MODES])
    return {mode: d / mode for mode in MODES}


_REGION_ATTRS = (
    "num_calls", "total_duration", "inclusive_duration", "exclusive_duration",
    "average_duration", "min_duration", "max_duration", "first_duration", "last_duration",
    "std_duration", "p50_duration", "p95_duration", "p99_duration", "first_start_time",
    "last_end_time", "source_file", "source_lineno", "source_text", "tags",
    "has_gpu_timing", "has_timing", "has_source", "has_event_data")
_REGION_ARRAYS = (
    "start_times_ns", "end_times_ns", "durations_ns", "exclusive_durations_ns", "call_ids",
    "parent_ids", "thread_ids", "task_ids", "await_times_ns", "gpu_durations_ns")
_RESULT_ATTRS = (
    "num_ranks", "region_names", "minimum_start_time", "maximum_end_time", "time_span",
    "total_time", "run_start_time", "finalize_time", "label", "display_label", "num_nodes",
    "time_origin", "startup_time", "has_event_data")


def _same(u, v):
    if isinstance(u, float) and isinstance(v, float):
        return u == pytest.approx(v, rel=1e-12, abs=1e-18)
    return u == v


def assert_same_results(a, b, threads=True):
    """a (spanscope) and b (scope-profiler) say the same about the run
    (threads=False: but for which thread ran each call, which a knows and b
    does not)."""
    arrays = _REGION_ARRAYS if threads else [k for k in _REGION_ARRAYS if k != "thread_ids"]
    for k in _RESULT_ATTRS:
        assert _same(getattr(a, k), getattr(b, k)), k
    for name in b.region_names:
        assert a[name].ranks == b[name].ranks
        for k in ("num_calls", "total_duration", "rank_imbalance", "p50_duration",
                  "std_duration", "exclusive_duration", "tags", "source_lineno"):
            assert _same(getattr(a[name], k), getattr(b[name], k)), (name, k)
        for rank in b[name].ranks:
            x, y = a[name][rank], b[name][rank]
            for k in _REGION_ATTRS:
                assert _same(getattr(x, k), getattr(y, k)), (name, rank, k)
            if not y.has_event_data:
                continue
            for k in arrays:
                u, v = getattr(x, k), getattr(y, k)
                assert (u is None) == (v is None), (name, k)
                if v is not None:
                    assert np.array_equal(u, v), (name, k)
            assert np.allclose(x.durations, y.durations, rtol=0, atol=0)
    assert len(a.summary()) == len(b.summary())
    for ra, rb in zip(a.summary(), b.summary()):
        assert set(ra) == set(rb)
        for k in rb:
            assert _same(ra[k], rb[k]), (rb["name"], k)
    if b.has_event_data:
        def ev(r, **kw):
            return [{k: v for k, v in e.items() if threads or k != "thread"}
                    for e in r.events(**kw)]
        assert ev(a) == ev(b)
        assert ev(a, relative=False) == ev(b, relative=False)
        strip = ("color",) if threads else ("color", "thread", "lane")  # lane: the thread's
        ca = [{k: v for k, v in c.items() if k not in strip} for c in a.call_stack()]
        cb = [{k: v for k, v in c.items() if k not in strip} for c in b.call_stack()]
        assert ca == cb
        assert a.call_graph() == b.call_graph()
    if threads:
        assert [repr(t) for r in a.threads.values() for t in r] == \
            [repr(t) for r in b.threads.values() for t in r]
    assert [repr(t) for r in a.tasks.values() for t in r] == \
        [repr(t) for r in b.tasks.values() for t in r]
    if threads:
        assert a.thread_summary() == b.thread_summary()


@pytest.mark.parametrize("mode", MODES)
def test_scope_profiler_files_read_the_same(sp_files, mode):
    """Each kind of file the real scope-profiler writes: every statistic,
    array, event, call stack, thread and task the same as its own reader."""
    path = sp_files[mode].with_suffix(".h5")
    assert_same_results(read_h5(path), sp_ref.read_h5(path))


def test_what_the_files_hold(sp_files):
    """Not only equal to scope-profiler: the values users look for."""
    plain = read_h5(sp_files["plain"].with_suffix(".h5"))
    assert plain.region_names == ["step", "assemble", "solve", "fib"]
    step = plain["step"]
    assert isinstance(step, MPIRegion) and isinstance(step[0], Region)
    assert step.num_calls == 4 and len(step[0]) == 4
    assert step[0].exclusive_duration < step[0].total_duration
    assert plain["assemble"][0].tags == ("golden",)
    assert plain["fib"][0].num_calls == 15  # fib(5)
    assert plain.label == "run-plain"
    assert plain["step"][0].durations_ns.dtype == np.int64
    assert plain["step"][0].durations == pytest.approx(plain["step"][0].durations_ns / NS)

    threads = read_h5(sp_files["threads"].with_suffix(".h5"))
    assert [t.name for t in threads.threads[0]] == ["MainThread", "worker"]
    assert sorted(set(threads["step"][0].thread_ids.tolist())) == [0, 1]
    assert threads["step"][0].for_thread(1).num_calls == 4
    assert [row["num_calls"] for row in threads.thread_summary()] == [12, 12]

    tasks = read_h5(sp_files["async"].with_suffix(".h5"))
    assert [t.coro_name for t in tasks.tasks[0]][:3] == ["main", "task", "task"]
    atask = tasks["atask"][0]
    assert atask.task_ids.tolist() == [1, 2]
    assert all(a > 0 for a in atask.await_times_ns)

    src = read_h5(sp_files["src"].with_suffix(".h5"))
    assert "sum(range(2000" in src["assemble"][0].source_text
    assert src["assemble"].source_file.endswith("gen.py")

    agg = read_h5(sp_files["agg"].with_suffix(".h5"))
    assert agg["step"][0].stored_summary["count"] == 4
    assert agg["step"][0].p50_duration is None


# --------------------------------------------------------------------------
# schemas 1, 2 and 3: scope-profiler's own compatibility fixtures
# --------------------------------------------------------------------------

FIXTURES = pathlib.Path(sp_ref.__file__).parent / "tests" / "fixtures" / "compatibility"


@pytest.mark.parametrize("schema", [1, 2, 3])
def test_supported_hdf5_schemas_remain_readable(schema, tmp_path):
    """scope-profiler's fixtures (region solve, starts [10,20,40], ends
    [15,33,55], line 7, tag golden), as its test_compatibility_fixtures."""
    src = FIXTURES / f"hdf5-schema-{schema}.h5.gz.b64"
    if not src.exists():
        pytest.skip("scope-profiler's fixtures are not installed")
    path = tmp_path / f"schema-{schema}.h5"
    path.write_bytes(gzip.decompress(base64.b64decode(src.read_text(encoding="ascii"))))
    results = read_h5(path)
    region = results["solve"][0]
    assert results.num_ranks == 1
    assert region.start_times_ns.tolist() == [10, 20, 40]
    assert region.end_times_ns.tolist() == [15, 33, 55]
    assert region.source_lineno == 7
    assert region.tags == ("golden",)
    assert_same_results(results, sp_ref.read_h5(path))
    # spanscope's own view reads the same file
    assert spanscope.read(path).schema == schema
    assert spanscope.read(path)["solve"].durations_ns.tolist() == [5, 13, 15]


def test_supported_json_profile_remains_readable():
    results = spanscope.read_json(FIXTURES / "json-v1.json")
    region = results["solve"][0]
    assert results.num_ranks == 1
    assert region.start_times_ns.tolist() == [10, 20, 40]
    assert region.end_times_ns.tolist() == [15, 33, 55]
    assert region.source_file == "solver.py"
    assert region.tags == ("golden",)


@pytest.fixture
def two_ranks(tmp_path):
    """scope-profiler's sample: 'setup' once and 'solve' twice on two ranks."""
    path = tmp_path / "sample.h5"
    write_schema1(path, {
        0: {"setup": ([0], [1 * NS]), "solve": ([2 * NS, 5 * NS], [4 * NS, 8 * NS])},
        1: {"setup": ([0], [3 * NS]), "solve": ([3 * NS, 7 * NS], [7 * NS, 11 * NS])},
    })
    return path


def test_two_ranks_per_rank_and_pooled(two_ranks):
    r = read_h5(two_ranks)
    assert r.num_ranks == 2
    solve = r["solve"]
    assert solve.ranks == [0, 1] and list(solve) == [0, 1] and 1 in solve
    assert solve[0].durations.tolist() == [2.0, 3.0]
    assert solve[1].durations.tolist() == [4.0, 4.0]
    assert solve.num_calls == 4
    assert solve.num_calls_per_rank() == {0: 2, 1: 2}
    assert solve.total_durations() == {0: 5.0, 1: 8.0}
    assert solve.total_duration == 13.0
    assert solve.average_duration == 3.25
    assert solve.rank_imbalance == pytest.approx(8.0 / 6.5)
    assert solve.rank_imbalance_pct == pytest.approx((8.0 / 6.5 - 1) * 100)
    assert solve.min_duration == 2.0 and solve.max_duration == 4.0
    assert solve.first_start_time == 2.0 and solve.last_end_time == 11.0
    with pytest.raises(KeyError, match="no data for rank 5"):
        solve[5]
    with pytest.raises(KeyError, match="No region named 'nope'"):
        r["nope"]
    assert [x.name for x in r.get_regions()] == ["setup", "solve"]
    assert [x.name for x in r.get_regions(include="so")] == ["solve"]
    assert [x.name for x in r.get_regions(exclude=["se"])] == ["solve"]
    assert r.minimum_start_time == 0.0 and r.maximum_end_time == 11.0
    assert r.time_span == 11.0
    assert r.total_time is None and r.run_start_time is None
    assert_same_results(r, sp_ref.read_h5(two_ranks))


def test_schema2_two_ranks(tmp_path):
    """Schema 2 (absolute start and end times in /events), two ranks, built
    with h5py as scope-profiler's schema-2 writer laid it out."""
    starts = [0, 10, 20, 5, 15]
    ends = [100, 18, 40, 50, 45]  # rank 0: step holds two solves; rank 1: step, solve
    minimal = tmp_path / "minimal.h5"  # without the source columns
    for path in (minimal, tmp_path / "schema2.h5"):
        _write_schema2(path, starts, ends, with_source=path != minimal)
    # scope-profiler's reader needs the source columns (KeyError without);
    # spanscope reads both
    with pytest.raises(KeyError):
        sp_ref.read_h5(minimal)
    assert read_h5(minimal)["solve"][0].source_lineno is None
    ours, theirs = read_h5(path), sp_ref.read_h5(path)
    assert ours.num_ranks == 2
    assert ours["solve"][0].durations_ns.tolist() == [8, 20]
    assert ours["solve"][0].source_lineno == 3
    assert ours["step"][0].exclusive_durations_ns.tolist() == [72]
    assert ours["step"][1].exclusive_durations_ns.tolist() == [15]
    assert ours["step"].rank_imbalance == pytest.approx(100 / 72.5)
    assert_same_results(ours, theirs)


def _write_schema2(path, starts, ends, with_source):
    with h5py.File(path, "w") as f:
        f.attrs["scope_profiler_schema"] = 2
        f.attrs["storage_layout"] = "columnar"
        f.create_group("metadata").attrs["mpi_size"] = 2
        f["region_table/names"] = np.array([b"step", b"solve"], dtype=object)
        idx = f.create_group("rank_region_index")
        idx["region_ids"] = np.array([0, 1, 0, 1], dtype=np.uint32)
        idx["ranks"] = np.array([0, 0, 1, 1], dtype=np.uint32)
        idx["event_offsets"] = np.array([0, 1, 3, 4], dtype=np.uint64)
        idx["event_counts"] = np.array([1, 2, 1, 1], dtype=np.uint64)
        idx["exclusive_totals"] = np.full(4, -1, dtype=np.int64)
        f["events/start_times"] = np.array(starts, dtype=np.int64)
        f["events/end_times"] = np.array(ends, dtype=np.int64)
        if with_source:
            text = h5py.string_dtype("utf-8")
            idx["source_lines"] = np.array([2, 3, 2, 3], dtype=np.int64)
            idx.create_dataset("source_files", data=["a.py"] * 4, dtype=text)
            idx.create_dataset("source_texts", data=[""] * 4, dtype=text)
            idx.create_dataset("tags", data=["[]", '["x"]', "[]", '["x"]'], dtype=text)


def test_summary_is_a_list_of_dicts(two_ranks):
    rows = read_h5(two_ranks).summary()
    assert [row["name"] for row in rows] == ["setup", "solve"]
    solve = rows[1]
    assert solve["num_calls"] == 4 and solve["num_ranks"] == 2
    assert solve["total_duration"] == 13.0
    for key in ("p50_duration", "p95_duration", "p99_duration", "rank_imbalance",
                "rank_imbalance_pct", "inclusive_duration", "exclusive_duration", "tags",
                "p50", "imbalance", "std_duration", "first_duration", "last_duration"):
        assert key in solve
    assert read_h5(two_ranks).summary(include="setup")[0]["name"] == "setup"


def test_events_and_origin(tmp_path):
    path = tmp_path / "with_start.h5"
    write_schema1(path, {0: {"solve": ([100 * NS], [110 * NS])}},
                   metadata={"start_time_ns": 80 * NS, "finalize_time_ns": 140 * NS})
    r = read_h5(path)
    assert r.run_start_time == 80.0 and r.finalize_time == 140.0
    assert r.total_time == 60.0 and r.startup_time == 20.0
    assert r.events()[0] == {"name": "solve", "rank": 0, "call_index": 0, "start": 20.0,
                             "end": 30.0, "duration": 10.0}
    assert r.events(origin=r.minimum_start_time)[0]["start"] == 0.0
    assert r.events(relative=False)[0]["start"] == pytest.approx(100.0)
    assert r.call_stack(origin=r.minimum_start_time)[0]["start"] == 0.0


# --------------------------------------------------------------------------
# the other direction: spanscope's files read by the real scope-profiler
# --------------------------------------------------------------------------

def _record_spanscope(path):
    ProfileManager.setup(file_path=str(path))
    for i in range(3):
        with ProfileManager.region("step"):
            with ProfileManager.region("inner"):
                sum(range(1000 * (i + 1)))
            with ProfileManager.region("io"):
                pass
    ProfileManager.finalize(verbose=False)


def test_spanscope_file_read_by_scope_profiler(tmp_path):
    path = tmp_path / "ours.h5"
    _record_spanscope(path)
    ours, theirs = read_h5(path), sp_ref.read_h5(path)
    assert ours.region_names == theirs.region_names == ["step", "inner", "io"]
    assert ours["step"][0].num_calls == 3
    # the fold's self times, ours, against scope-profiler's from the file
    assert ours["step"][0].exclusive_duration == pytest.approx(
        theirs["step"][0].exclusive_duration)
    assert_same_results(ours, theirs)


def test_a_region_that_never_ran(tmp_path):
    """A region defined but never called in the period is not in the file
    (scope-profiler's writer leaves a region without a completed call out
    of the region table), and both readers agree on the file."""
    path = tmp_path / "unused.h5"
    ProfileManager.setup(file_path=str(path))
    ProfileManager.region("never")
    with ProfileManager.region("used"):
        pass
    ProfileManager.finalize(verbose=False)
    ours, theirs = read_h5(path), sp_ref.read_h5(path)
    assert ours.region_names == theirs.region_names == ["used"]
    assert ours.num_ranks == theirs.num_ranks == 1
    assert [row["name"] for row in ours.summary()] == ["used"]
    with pytest.raises(KeyError):
        ours["never"]


def test_json_both_directions(sp_files, tmp_path):
    stem = sp_files["plain"]
    for name in (".json", ".json.gz"):  # scope-profiler's JSON read by spanscope
        assert_same_results(spanscope.read_json(stem.with_suffix(name) if name == ".json"
                                                else pathlib.Path(str(stem) + name)),
                            sp_ref.read_json(stem.with_suffix(".json")))
    ours = read_h5(stem.with_suffix(".h5"))  # spanscope's JSON read by scope-profiler
    out = spanscope.write_json(ours, tmp_path / "ours.json")
    doc = json.loads(out.read_text())
    assert doc["format"] == "scope-profiler-profile" and doc["format_version"] == 1
    assert doc["exporter"].startswith("spanscope@")
    assert_same_results(spanscope.read_json(out), sp_ref.read_json(out))
    assert_same_results(sp_ref.read_json(out), sp_ref.read_h5(stem.with_suffix(".h5")))
    gz = spanscope.write_json(ours, tmp_path / "ours.json.gz", include="step")
    assert sp_ref.read_json(gz).region_names == ["step"]
    paths = spanscope.export_json([ours, read_h5(sp_files["src"].with_suffix(".h5"))],
                                  tmp_path / "many.json", verbose=False)
    assert [p.name for p in paths] == ["many_run-plain.json", "many_run-src.json"]


def test_json_errors(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "something else"}')
    with pytest.raises(spanscope.JSONProfileError, match="not a scope-profiler JSON"):
        spanscope.read_json(bad)
    bad.write_text('{"format": "scope-profiler-profile", "format_version": 99}')
    with pytest.raises(spanscope.JSONProfileError, match="version 99"):
        spanscope.read_json(bad)
    bad.write_text("{not json")
    with pytest.raises(spanscope.JSONProfileError):
        spanscope.read_json(bad)
    with pytest.raises(FileNotFoundError):
        spanscope.read_json(tmp_path / "missing.json")


# --------------------------------------------------------------------------
# one model: both Python views are the C reader's output
# --------------------------------------------------------------------------

def test_read_h5_is_a_view_of_the_c_reader(sp_files):
    path = sp_files["plain"].with_suffix(".h5")
    r = read_h5(path)
    model = r.model
    assert isinstance(model, spanscope.Results)
    # the arrays are the reader's own (no copy, no second parse)
    assert np.shares_memory(r["step"][0].start_times_ns, model["step"].start_ns)
    assert not r["step"][0].start_times_ns.flags.writeable
    # exclusive times are the fold's self times
    assert np.array_equal(r["step"][0].exclusive_durations_ns, model["step"].self_ns)
    # and spanscope.read keeps working unchanged beside it
    res = spanscope.read(path)
    assert res["step"].num_calls == 4 and "step" in res
    assert res["assemble"].tags_json == '["golden"]'


def test_results_built_in_python_fold_in_c():
    """Regions built by hand (no file): exclusive times by the one fold."""
    results = ProfilingResults({
        "outer": MPIRegion("outer", {0: Region(np.array([0]), np.array([100]))}),
        "inner": MPIRegion("inner", {0: Region(np.array([10, 50]), np.array([30, 60]))}),
    })
    assert results["outer"][0].exclusive_durations_ns.tolist() == [70]
    assert results["inner"][0].exclusive_durations_ns.tolist() == [20, 10]
    calls = results.call_stack(relative=False)
    assert [(c["name"], c["parent"], c["depth"]) for c in calls] == [
        ("outer", None, 0), ("inner", 0, 1), ("inner", 0, 1)]
    assert spanscope.call_stack_roots(calls) == [0]
    assert spanscope.call_stack_children(calls)[0] == [1, 2]
    arrays = spanscope.build_call_arrays(results.get_regions(), 0)
    assert isinstance(arrays, spanscope.CallArrays) and len(arrays) == 3
    assert arrays.exclusive_ns.tolist() == [70, 20, 10]


def test_a_new_owner_folds_again(sp_files):
    """Regions of a file put into a result set of their own (a subset) get
    their exclusive times against their new neighbours, as in scope-profiler."""
    path = sp_files["plain"].with_suffix(".h5")
    for lib in (spanscope, sp_ref):
        step = lib.read_h5(path)["step"]
        alone = lib.ProfilingResults({"step": step})
        assert alone["step"][0].exclusive_duration == pytest.approx(step.total_duration)
    ours = read_h5(path)
    assert ours["step"][0].exclusive_duration < ours["step"][0].total_duration


def test_partial_overlap_is_a_nesting_error():
    results = ProfilingResults({
        "a": MPIRegion("a", {0: Region(np.array([0]), np.array([10]))}),
        "b": MPIRegion("b", {0: Region(np.array([5]), np.array([15]))}),
    })
    with pytest.raises(spanscope.NestingError, match="overlap"):
        results.call_stack()
    assert results["a"][0].exclusive_duration >= 0  # exclusive time still folds


def test_region_statistics_in_seconds():
    region = Region(np.array([0, 10 * NS], dtype=np.int64),
                    np.array([2 * NS, 14 * NS], dtype=np.int64))
    assert region.durations.tolist() == [2.0, 4.0]
    assert region.total_duration == 6.0 and region.average_duration == 3.0
    assert region.min_duration == 2.0 and region.max_duration == 4.0
    assert region.std_duration == 1.0
    assert region.first_duration == 2.0 and region.last_duration == 4.0
    assert region.last_end_time == 14.0
    assert region.p50_duration == pytest.approx(3.0)
    assert region.p95_duration == pytest.approx(3.9)
    assert region.p99_duration == pytest.approx(3.98)
    with pytest.raises(ValueError):
        region.percentile_duration(101)
    with pytest.raises(ValueError, match="same length"):
        Region(np.array([0, 1]), np.array([2]))


# --------------------------------------------------------------------------
# print_summary, dataframes, summary-only reads
# --------------------------------------------------------------------------

def test_print_summary_tree_own_rows_and_recursion(capsys):
    results = ProfilingResults({
        "scope_profiler.session": MPIRegion(
            "scope_profiler.session", {0: Region(np.array([0]), np.array([100]))}),
        "outer": MPIRegion("outer", {0: Region(np.array([10, 50]), np.array([40, 90]))}),
        "fib": MPIRegion("fib", {0: Region(np.array([12, 14, 60]), np.array([30, 20, 70]))}),
    })
    results.print_summary()
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert "% session" in lines[1] and "total [s]" in lines[1]
    assert "100.00%" in out and "70.00%" in out
    # scope-profiler's box: "  │ " then the tree prefix of depth 2
    assert lines[0].startswith("  ╭") and lines[1].startswith("  │ region")
    assert any(line.startswith("  │ │ └─ fib ↻ (3x)") and "28.00%" in line for line in lines)
    assert out.count("(own)") == 2
    assert "the call count includes nested calls, the total only the outermost" in out
    results.print_summary(columns=["region", "calls", "avg", "imbalance"],
                          suppress_notes=True)
    out = capsys.readouterr().out
    assert "avg/call [s]" in out and "% session" not in out and "(3x)" not in out
    assert "Durations are in seconds" not in out
    with pytest.raises(ValueError, match="Unknown region summary column"):
        results.print_summary(columns=["bogus"])
    with pytest.raises(ValueError, match="unknown sort key"):
        results.print_summary(sort="bogus")


def test_print_summary_ranks_and_filters(two_ranks, capsys):
    r = read_h5(two_ranks)
    r.print_summary(columns=["region", "ranks", "calls", "total"], ranks=[1],
                    exclude="setup")
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("  │ solve"))
    assert row.split() == ["│", "solve", "1", "2", "8.000000", "│"]
    assert "setup" not in out.split("\n", 1)[1]
    assert "% session" not in out  # no session time in the file: no column


def test_to_dataframe_or_a_clear_error(two_ranks, monkeypatch):
    r = read_h5(two_ranks)
    try:
        import pandas  # noqa: F401
    except ImportError:
        pass
    else:
        frame = r.to_dataframe()
        assert list(frame["name"]) == ["setup", "solve"]
        assert list(r.to_dataframe(per_rank=True)["rank"]) == [0, 1, 0, 1]
        ev = r.to_events_dataframe(include="solve")
        assert list(ev.columns) == ["name", "rank", "call_index", "start", "end", "duration"]
        assert len(ev) == 4
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match="requires pandas"):
        r.to_dataframe()
    with pytest.raises(ImportError, match="requires pandas"):
        r.to_events_dataframe()


@pytest.mark.parametrize("mode", MODES)
def test_read_h5_summary(sp_files, mode):
    """The stored statistics, read without the events (the C reader's
    index-only open): the same as scope-profiler's summary-only read."""
    path = sp_files[mode].with_suffix(".h5")
    ours, theirs = spanscope.read_h5_summary(path), sp_ref.read_h5_summary(path)
    assert not ours.has_event_data and not theirs.has_event_data
    assert ours.region_names == theirs.region_names
    assert ours.num_ranks == theirs.num_ranks
    for name in theirs.region_names:
        for rank in theirs[name].ranks:
            assert ours[name][rank].stored_summary == theirs[name][rank].stored_summary
            assert ours[name][rank].tags == theirs[name][rank].tags
    for name in theirs.region_names:
        for k in ("num_calls", "total_duration", "exclusive_duration", "min_duration",
                  "max_duration", "average_duration", "first_duration", "last_duration"):
            assert _same(getattr(ours[name], k), getattr(theirs[name], k)), (name, k)
        assert ours[name].std_duration == pytest.approx(theirs[name].std_duration)
        assert ours[name].p50_duration is None
    with pytest.raises(spanscope.EventDataUnavailableError):
        ours.events()
    with pytest.raises(spanscope.EventDataUnavailableError):
        ours["step"][0].events()
    some = spanscope.read_h5_summary(path, regions=["step"], ranks=0)
    assert some.region_names == ["step"]
    assert [repr(t) for r in ours.threads.values() for t in r] == \
        [repr(t) for r in theirs.threads.values() for t in r]


def test_read_h5_summary_of_an_old_file(two_ranks):
    """No summary_statistics (schema 1): read whole, or refused."""
    assert spanscope.read_h5_summary(two_ranks).has_event_data
    with pytest.raises(spanscope.SummaryDataUnavailable):
        spanscope.read_h5_summary(two_ranks, fallback=False)


# --------------------------------------------------------------------------
# errors, dispatch, merge, integrations that are not there yet
# --------------------------------------------------------------------------

def test_bad_files_give_clear_errors(tmp_path, two_ranks):
    with pytest.raises(FileNotFoundError):
        read_h5(tmp_path / "missing.h5")
    trunc = tmp_path / "trunc.h5"
    trunc.write_bytes(two_ranks.read_bytes()[:600])
    with pytest.raises(spanscope.CorruptProfileError, match="trunc.h5") as e:
        read_h5(trunc)
    assert isinstance(e.value, OSError)
    other = tmp_path / "other.h5"
    with h5py.File(other, "w") as f:
        f["x"] = np.arange(3)
    with pytest.raises(spanscope.CorruptProfileError, match="not a scope-profiler profile"):
        read_h5(other)
    future = tmp_path / "future.h5"
    with h5py.File(future, "w") as f:
        f.attrs["scope_profiler_schema"] = 9
    with pytest.raises(spanscope.HDF5SchemaError, match="schema version 9") as e:
        read_h5(future)
    assert isinstance(e.value, ValueError)  # as scope-profiler raises it
    with pytest.raises(ValueError):
        sp_ref.read_h5(future)


def test_load_and_format_dispatch(sp_files, tmp_path):
    h5 = sp_files["plain"].with_suffix(".h5")
    js = sp_files["plain"].with_suffix(".json")
    assert spanscope.sniff_profile_format(h5) == "hdf5"
    assert spanscope.sniff_profile_format(js) == "json"
    renamed = tmp_path / "profile.dat"
    renamed.write_bytes(js.read_bytes())
    assert spanscope.load(renamed).region_names == read_h5(h5).region_names
    assert spanscope.read_profile(js).region_names == spanscope.load(h5).region_names
    html = tmp_path / "r.html"
    html.write_text("<html></html>")
    with pytest.raises(ValueError, match="write-only"):
        spanscope.load(html)
    out = spanscope.write_profile(read_h5(h5), tmp_path / "copy.json")
    assert sp_ref.read_json(out).region_names == sp_ref.read_h5(h5).region_names
    copy = spanscope.write_profile(read_h5(h5), tmp_path / "copy.h5")
    assert_same_results(read_h5(copy), sp_ref.read_h5(h5))
    merged = spanscope.merge_results(read_h5(h5))
    # results held in Python are written in C (test_write_profile.py has
    # more); the file written says which thread ran each call (0: one thread)
    # where the source had no thread ids
    assert_same_results(read_h5(spanscope.write_profile(merged, tmp_path / "merged.h5")),
                        sp_ref.read_h5(h5), threads=False)
    # .html is the report (create_html_report), for file-backed and merged results
    for res in (read_h5(h5), merged):
        page = spanscope.write_profile(res, tmp_path / "x.html").read_text()
        assert all(name in page for name in sp_ref.read_h5(h5).region_names)


def test_merge_results(tmp_path):
    py = ProfilingResults({"driver": MPIRegion(
        "driver", {0: Region(np.array([0]), np.array([100]))})}, metadata={"label": "py"})
    native = ProfilingResults({"fortran:kernel": MPIRegion(
        "fortran:kernel", {0: Region(np.array([10]), np.array([40]))})})
    merged = spanscope.merge_results(py, native, label="both")
    assert merged.region_names == ["driver", "fortran:kernel"]
    assert merged.label == "both"
    # exclusive time is refolded against the merged neighbours
    assert merged["driver"][0].exclusive_durations_ns.tolist() == [70]
    assert py["driver"][0].exclusive_durations_ns.tolist() == [100]
    with pytest.raises(ValueError, match="more than one result set"):
        spanscope.merge_results(py, py)
    with pytest.raises(ValueError, match="at least one"):
        spanscope.merge_results()


def test_counter_accessors_say_they_are_not_there_yet(two_ranks):
    r = read_h5(two_ranks)
    # LIKWID results are read (tests/python/test_likwid.py): none in this file
    assert not r.has_likwid and r.get_likwid_regions() == {} and r.likwid_ranks == []
    # perf events are read (tests/python/test_perf_events.py): none in this file
    assert not r.has_perf_events and r.get_perf_events() == {}


def test_module_level_names():
    for name in ("read_h5", "read_h5_summary", "read_json", "write_json", "export_json",
                 "read_profile", "write_profile", "load", "sniff_profile_format",
                 "merge_results", "ProfilingResults", "MPIRegion", "Region",
                 "CorruptProfileError", "JSONProfileError", "EventDataUnavailableError",
                 "NestingError", "build_call_stack", "call_stack_roots",
                 "call_stack_children", "build_call_arrays", "CallArrays"):
        assert hasattr(spanscope, name), name
        assert name in spanscope.__all__, name
    assert issubclass(spanscope.CorruptProfileError, OSError)
    assert issubclass(spanscope.JSONProfileError, ValueError)
    # the live region class keeps its own name
    assert spanscope.LiveRegion is spanscope.profile_manager.Region
    assert spanscope.Region is not spanscope.LiveRegion
