"""scope-profiler's perf_events face over spanscope (issue 33 part 3): its
rank<N>/perf_events groups read from files scope-profiler 0.7.5 itself
wrote (tests/python/data/perf_events, made by make_samples.py there), read
the same as scope-profiler reads them; the results API (has_perf_events,
get_perf_events, the constructor's perf_events); the summary's perf-event
tables with IPC and miss rates; the plots; malformed groups refused with
the group named.  The C reader of live counters is tests/c/test_perfev.c."""

import json
import shutil
from io import StringIO
from pathlib import Path

import numpy as np
import pytest

import spanscope
import spanscope.results as R
from spanscope.plots import available_perf_event_metrics, plot_perf_events
from spanscope.results import CorruptProfileError, PerfEventTotals, ProfilingResults
from spanscope.results._counters import (PERF_DERIVED, perf_event_tables,
                                         perf_metric_value, print_perf_event_tables,
                                         read_perf_events)

DATA = Path(__file__).parent / "data" / "perf_events"
EXPECTED = json.loads((DATA / "expected.json").read_text())
FILES = sorted(EXPECTED)


def _plain(perf):
    """get_perf_events()'s answer as expected.json writes it."""
    return {str(rank): {name: {"calls": t.calls, "values": dict(t.values)}
                        for name, t in regions.items()}
            for rank, regions in perf.items()}


# --- reading scope-profiler's files --------------------------------------------

@pytest.mark.parametrize("name", FILES)
def test_files_read_as_scope_profiler_read_them(name):
    """expected.json is what scope-profiler's own read_h5 read from each
    file when make_samples.py wrote it."""
    res = R.read_h5(DATA / name)
    assert res.has_perf_events == EXPECTED[name]["has_perf_events"]
    assert _plain(res.get_perf_events()) == EXPECTED[name]["ranks"]
    for rank, regions in res.get_perf_events().items():
        assert isinstance(rank, int)
        assert all(isinstance(t, PerfEventTotals) for t in regions.values())
        assert res.get_perf_events(rank) == regions


@pytest.mark.parametrize("name", FILES)
def test_same_as_scope_profiler_live(name):
    """The installed scope-profiler 0.7.5 (scripts/install-deps.sh) reads
    the same totals, calls, ranks and order, in read_h5 and in
    read_h5_summary (which reads none in either)."""
    sp_results = pytest.importorskip("scope_profiler.results")
    theirs = sp_results.ProfilingResults.from_h5(DATA / name)
    ours = R.read_h5(DATA / name)
    assert ours.has_perf_events == theirs.has_perf_events
    t, o = theirs.get_perf_events(), ours.get_perf_events()
    assert list(o) == list(t)
    for rank in t:
        assert list(o[rank]) == list(t[rank])
        for region in t[rank]:
            assert o[rank][region].calls == t[rank][region].calls
            assert o[rank][region].values == t[rank][region].values
            # the file's event order (scope-profiler's dict order) is kept
            assert list(o[rank][region].values) == list(t[rank][region].values)
    sp_reader = pytest.importorskip("scope_profiler.h5reader")
    assert R.read_h5_summary(DATA / name).has_perf_events == \
        sp_reader.read_h5_summary(DATA / name).has_perf_events


def test_software_counters_of_a_real_recording():
    """sw_counters.h5 is a real recording (task-clock, page-faults,
    context-switches on Linux): every region has all three, task-clock in
    ns grows with work, the region that faults 2 MiB of pages in has the
    page faults, and a parent's totals hold its children's."""
    perf = R.read_h5(DATA / "sw_counters.h5").get_perf_events(0)
    assert set(perf) == {"outer", "touch_pages", "spin", "once"}
    for t in perf.values():
        assert list(t.values) == ["task-clock", "page-faults", "context-switches"]
    assert perf["touch_pages"].values["page-faults"] >= 500
    assert perf["touch_pages"].values["page-faults"] > 100 * perf["spin"].values["page-faults"]
    assert perf["spin"].values["task-clock"] > perf["once"].values["task-clock"]
    for event in ("task-clock", "page-faults"):
        assert perf["outer"].values[event] >= (perf["touch_pages"].values[event]
                                               + perf["spin"].values[event])
    assert perf["outer"].calls == perf["spin"].calls == 3


def test_rank_selection_and_missing_ranks():
    res = R.read_h5(DATA / "hw_two_ranks.h5")
    assert sorted(res.get_perf_events()) == [0, 1]
    assert set(res.get_perf_events(1)) == {"compute"}
    assert res.get_perf_events(7) == {}
    assert "branches" not in res.get_perf_events(1)["compute"].values
    assert not R.read_h5(DATA / "no_counters.h5").get_perf_events(0)


def test_read_perf_events_directly():
    perf = read_perf_events(DATA / "hw_two_ranks.h5")
    assert perf[0]["stream"] == PerfEventTotals(2, {
        "cycles": 6_000_000, "instructions": 3_000_000, "cache-references": 400_000,
        "cache-misses": 200_000, "branches": 100_000, "branch-misses": 1_000})
    assert read_perf_events(DATA / "no_counters.h5") == {}
    with pytest.raises(FileNotFoundError):
        read_perf_events(DATA / "missing.h5")


# --- the constructor, as scope-profiler's tests build results -------------------

def test_constructor_takes_perf_events():
    res = ProfilingResults({}, perf_events={
        0: {"keep": PerfEventTotals(2, {"cycles": 1234, "instructions": 9}),
            "skip": PerfEventTotals(1, {"cycles": 8})}})
    assert res.has_perf_events
    assert res.get_perf_events(0)["keep"].calls == 2
    assert not ProfilingResults({}).has_perf_events
    assert ProfilingResults({}).get_perf_events() == {}
    assert not ProfilingResults({}, perf_events={0: {}}).has_perf_events


def test_merged_results_hold_none_as_in_scope_profiler():
    res = R.read_h5(DATA / "hw_two_ranks.h5")
    assert res.has_perf_events
    assert not R.merge_results(res).has_perf_events


# --- the summary's tables ---------------------------------------------------------

def test_tables_filter_and_format_as_scope_profiler():
    results = ProfilingResults({}, perf_events={
        0: {"keep": PerfEventTotals(2, {"cycles": 1234, "instructions": 9}),
            "skip": PerfEventTotals(1, {"cycles": 8})}})
    tables = perf_event_tables(results, include="keep")
    assert tables[0]["events"] == ["cycles", "instructions"]
    assert tables[0]["rows"] == [("keep", 2, 1234, 9)]
    assert tables[0]["metrics"] == ["ipc"]
    assert tables[0]["metric_rows"] == [("keep", pytest.approx(9 / 1234))]
    stream = StringIO()
    print_perf_event_tables(results, include="keep", stream=stream)
    text = stream.getvalue()
    assert "Perf events (rank 0)" in text and "1234" in text and "IPC" in text
    assert "skip" not in text
    assert perf_event_tables(results, exclude="k") == [
        {"rank": 0, "events": ["cycles"], "rows": [("skip", 1, 8)], "metrics": [],
         "metric_rows": [("skip",)]}]
    assert perf_event_tables(results, ranks=[1]) == []


def test_tables_ratios_and_missing_events():
    res = R.read_h5(DATA / "hw_two_ranks.h5")
    t0, t1 = perf_event_tables(res)
    assert t0["metrics"] == ["ipc", "cache-misses-per-ki", "cache-miss-rate",
                             "branch-miss-rate"]
    compute = dict(zip(t0["metrics"], t0["metric_rows"][0][1:]))
    assert compute == {"ipc": 2.25, "cache-misses-per-ki": pytest.approx(5000 / 9000),
                       "cache-miss-rate": 10.0, "branch-miss-rate": 2.0}
    assert t1["metrics"] == ["ipc", "cache-misses-per-ki", "cache-miss-rate"]
    stream = StringIO()
    print_perf_event_tables(res, stream=stream)
    text = stream.getvalue()
    assert "Perf events (rank 1)" in text
    assert "branch miss %" in text and "2.25" in text and "9000000" in text
    # a region without an event shows "-", not 0
    mixed = ProfilingResults({}, perf_events={0: {
        "a": PerfEventTotals(1, {"cycles": 10, "instructions": 20}),
        "b": PerfEventTotals(1, {"page-faults": 3})}})
    rows = perf_event_tables(mixed)[0]
    assert rows["rows"] == [("a", 1, 10, 20, None), ("b", 1, None, None, 3)]
    assert rows["metric_rows"] == [("a", 2.0), ("b", None)]
    stream = StringIO()
    print_perf_event_tables(mixed, stream=stream)
    assert "│ b " in stream.getvalue() and " - " in stream.getvalue()


def test_metric_values():
    t = PerfEventTotals(3, {"cycles": 0, "instructions": 10, "branches": 4,
                            "branch-misses": 1})
    assert np.isnan(perf_metric_value(t, "ipc"))  # no cycles counted
    assert perf_metric_value(t, "branch-miss-rate") == 25.0
    assert perf_metric_value(t, "instructions") == 10.0
    assert np.isnan(perf_metric_value(t, "cache-misses"))
    assert set(PERF_DERIVED) >= {"ipc", "cache-misses-per-ki"}


# --- plots ------------------------------------------------------------------------

def _synthetic():
    """scope-profiler's own test results (test_post_processing.py)."""
    return ProfilingResults(regions={}, num_ranks=1, perf_events={0: {
        "compute": PerfEventTotals(calls=2, values={"cycles": 100, "instructions": 300,
                                                    "cache-misses": 2}),
        "stream": PerfEventTotals(calls=1, values={"cycles": 200, "instructions": 100,
                                                   "cache-misses": 20})}},
        file_path="synthetic.h5")


def test_available_metrics_as_scope_profiler():
    assert available_perf_event_metrics(_synthetic()) == [
        "ipc", "cache-misses-per-ki", "cache-misses", "cycles", "instructions"]
    assert available_perf_event_metrics(DATA / "hw_two_ranks.h5")[:4] == [
        "ipc", "cache-misses-per-ki", "cache-miss-rate", "branch-miss-rate"]
    assert available_perf_event_metrics(str(DATA / "sw_counters.h5")) == [
        "context-switches", "page-faults", "task-clock"]


def test_inputs_as_the_other_plots_take_them():
    """A path, a spanscope.read Results, ProfilingResults, or a list; a
    recording without counters has no metrics and nothing to plot."""
    assert available_perf_event_metrics(R.read(DATA / "hw_two_ranks.h5"))[0] == "ipc"
    assert available_perf_event_metrics(DATA / "no_counters.h5") == []
    assert available_perf_event_metrics([R.read(DATA / "no_counters.h5"),
                                         DATA / "sw_counters.h5"])[-1] == "task-clock"
    with pytest.raises(ValueError, match="None of the selected files recorded perf-event"):
        plot_perf_events(DATA / "no_counters.h5", verbose=False)
    with pytest.raises(ValueError, match="No profiling data"):
        available_perf_event_metrics([])
    with pytest.raises(TypeError, match="ProfilingResults or paths"):
        available_perf_event_metrics(42)


def test_plot_perf_events(tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "ipc.png"
    fig = plot_perf_events(_synthetic(), metric="ipc", filepath=out, verbose=False)
    assert out.stat().st_size > 0
    ax = fig.axes[0]
    heights = [p.get_height() for p in ax.patches]
    assert heights == [3.0, 0.5]  # compute, stream: instructions / cycles of the totals
    with pytest.raises(ValueError, match="unavailable"):
        plot_perf_events(_synthetic(), metric="not-an-event", verbose=False)
    with pytest.raises(ValueError, match="None of the selected"):
        plot_perf_events(ProfilingResults({}), verbose=False)
    with pytest.raises(ValueError, match="No perf-event regions"):
        plot_perf_events(_synthetic(), include="does-not-match", verbose=False)
    # two ranks of one file: one series per rank, labelled "rank N"
    fig = plot_perf_events(DATA / "hw_two_ranks.h5", metric="cache-miss-rate",
                           filepath=tmp_path / "miss.svg", verbose=False)
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert labels == ["rank 0", "rank 1"]
    with pytest.raises(ValueError, match="labels must match"):
        plot_perf_events(DATA / "hw_two_ranks.h5", metric="ipc", labels=["one"],
                         verbose=False)
    # a raw event of a real recording, two runs side by side
    plot_perf_events([DATA / "sw_counters.h5", DATA / "sw_counters.h5"],
                     metric="page-faults", filepath=tmp_path / "pf.png", verbose=False)


def test_plot_perf_events_plotly(tmp_path):
    pytest.importorskip("plotly")
    out = tmp_path / "ipc.html"
    plot_perf_events(_synthetic(), metric="ipc", filepath=out, verbose=False,
                     backend="plotly")
    assert out.stat().st_size > 0


# --- malformed groups ---------------------------------------------------------------

def _hostile(tmp_path, edit):
    h5py = pytest.importorskip("h5py")
    path = tmp_path / "bad.h5"
    shutil.copy(DATA / "sw_counters.h5", path)
    with h5py.File(path, "r+") as f:
        edit(f["rank0/perf_events"])
    return path


def _replace_values(g, data):
    del g["spin/values"]
    g["spin"].create_dataset("values", data=data)


@pytest.mark.parametrize("edit, message", [
    (lambda g: _replace_values(g, np.asarray([1, 2], np.uint64)), "shape"),
    (lambda g: _replace_values(g, np.asarray([1.5, 2.0, 3.0])), "not integer"),
    (lambda g: _replace_values(g, np.asarray([1, -2, 3], np.int64)), "negative"),
    (lambda g: g["spin"].attrs.__delitem__("calls"), "calls"),
    (lambda g: g["spin"].attrs.__setitem__("calls", -1), "calls"),
    (lambda g: g["spin"].attrs.__setitem__("event_names", ["a", "a", "b"]), "twice"),
    (lambda g: g["spin"].attrs.__setitem__("event_names", ["a", "", "b"]), "not a name"),
    (lambda g: g.__delitem__("spin/values"), "values"),
    (lambda g: (g.__delitem__("spin"), g.create_dataset("spin", data=[1])), "not a group"),
])
def test_malformed_groups_are_refused_by_name(tmp_path, edit, message):
    path = _hostile(tmp_path, edit)
    res = R.read_h5(path)  # the timing part reads as before
    assert res.region_names
    with pytest.raises(CorruptProfileError, match=message) as info:
        res.get_perf_events()
    assert "rank0/perf_events/spin" in str(info.value)
    with pytest.raises(CorruptProfileError):
        read_perf_events(path)


def test_perf_events_not_a_group(tmp_path):
    h5py = pytest.importorskip("h5py")
    path = tmp_path / "bad.h5"
    shutil.copy(DATA / "sw_counters.h5", path)
    with h5py.File(path, "r+") as f:
        del f["rank0/perf_events"]
        f["rank0"].create_dataset("perf_events", data=[1, 2])
    with pytest.raises(CorruptProfileError, match="rank0/perf_events is not a group"):
        read_perf_events(path)


# -- the perf_events option: counted by the C core per span ----------------------------

def test_perf_events_option_records_counters_per_region(tmp_path):
    """setup(perf_events=[...]) reads the counters at every begin and end
    (SPS_TRACK_COUNTERS) and finalize writes scope-profiler's groups, which
    its results API reads back: software events work without a PMU."""
    import numpy as np
    out = tmp_path / "perf.h5"
    spanscope.setup(file_path=str(out), perf_events=["Task-Clock", "page-faults"])
    for _ in range(3):  # (conftest's fixture ends the session)
        with spanscope.ProfileManager.region("touch"):
            a = np.ones(1 << 21)  # 16 MiB of fresh pages
            a.sum()
        with spanscope.ProfileManager.region("idle"):
            pass
    spanscope.finalize(verbose=False)
    r = spanscope.read_h5(str(out))
    assert r.has_perf_events
    totals = r.get_perf_events()[0]
    touch = totals["touch"]
    assert touch.calls == 3
    assert list(touch.values) == ["task-clock", "page-faults"]  # lower case, in order
    assert touch.values["task-clock"] > 0
    assert touch.values["page-faults"] > 0
    assert totals["idle"].values["page-faults"] < touch.values["page-faults"]


@pytest.mark.parametrize("events, message", [
    ([], "non-empty list"), (["cycles", "CYCLES"], "unique"), (["no-such-event"], "unknown"),
])
def test_perf_events_option_rejects_bad_names(events, message):
    with pytest.raises(ValueError, match=message):
        spanscope.setup(output=None, perf_events=events)
    assert not spanscope.is_configured()


def test_merge_keeps_every_ranks_perf_event_groups(tmp_path, build_dir):
    """spanscope merge copies each input's rank<N> groups under the rank
    it gave that input, and the merged /values keeps both ranks' rows."""
    import subprocess
    import h5py
    from spanscope import _ext
    from spanscope.profile_manager._session import _write_perf_events
    paths = []
    for rank in (0, 1):
        path = str(tmp_path / f"r{rank}.h5")
        _ext.setup(path, rank=rank, size=2, local=True, track=2,
                   counters="task-clock,page-faults")
        with _ext.region_new("work"):
            np.ones(1 << 18).sum()
        _ext.finalize(path, False)
        _ext.shutdown()
        _write_perf_events(path, ("task-clock", "page-faults"))
        paths.append(path)
    out = str(tmp_path / "merged.h5")
    cli = str(build_dir / "spanscope")
    done = subprocess.run([cli, "merge", "-o", out, *paths], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    with h5py.File(out) as f:
        assert sorted(f["values"]["rank"][()]) == [0, 1]
        for rank in (0, 1):
            g = f[f"rank{rank}/perf_events/work"]
            assert g.attrs["calls"] == 1 and list(g.attrs["event_names"]) == [
                "task-clock", "page-faults"]
    totals = spanscope.read_h5(out).get_perf_events()
    assert sorted(totals) == [0, 1] and totals[1]["work"].values["task-clock"] > 0
