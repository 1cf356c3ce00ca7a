"""spanscope.plots: scope-profiler 0.7.5's plots (plot_gantt, plot_flame_chart,
plot_flame_graph, plot_durations, plot_duration_histogram, plot_imbalance,
plot_rank_heatmap, plot_duration_timeseries, plot_timeline_density,
plot_speedup, plot_scaling_efficiency) over recordings made here (threads,
nesting, several ranks through `spanscope merge`), each rendered to PNG
and SVG and checked: PNG magic and size, SVG parsing, the labels in the SVG
text, the numbers behind the plot (data_filepath) against the file; the
command line (`python -m spanscope.plots`) and its error paths; the
missing-matplotlib error.
"""
import csv
import importlib.util
import json
import os
import pathlib
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import spanscope
from spanscope import ProfileManager

pytest.importorskip("matplotlib")
h5py = pytest.importorskip("h5py")
from spanscope import plots  # noqa: E402

BUILD = pathlib.Path(os.environ.get("SPS_BUILD", pathlib.Path(__file__).parents[2] / "build"))
CLI = BUILD / "spanscope"
SVG_NS = "{http://www.w3.org/2000/svg}"
REGIONS = ["outer", "inner", "leaf", "worker"]


def spin(ns):
    t = time.perf_counter_ns()
    while time.perf_counter_ns() - t < ns:
        pass


def record(path, iters=4, threads=1, slow=1.0):
    """A recording: outer > inner > leaf nested on the main thread, and
    `threads` worker threads with their own `worker` > `leaf` calls; slow
    scales the spin times (a straggler rank, a slower run)."""
    ProfileManager.setup(file_path=str(path))
    leaf = ProfileManager.profile("leaf")(lambda: spin(int(20_000 * slow)))

    def work():
        for _ in range(iters):
            with ProfileManager.region("worker"):
                spin(int(30_000 * slow))
                leaf()

    ts = [threading.Thread(target=work) for _ in range(threads)]
    for t in ts:
        t.start()
    for _ in range(iters):
        with ProfileManager.region("outer"):
            spin(int(10_000 * slow))
            with ProfileManager.region("inner"):
                leaf()
                leaf()
    for t in ts:
        t.join()
    ProfileManager.finalize(verbose=False)
    ProfileManager._reset()
    return path


def set_rank(path, rank, size):
    with h5py.File(path, "r+") as f:
        f["metadata"].attrs["rank"] = np.int64(rank)
        f["metadata"].attrs["size"] = np.int64(size)


@pytest.fixture(scope="module")
def run1(tmp_path_factory):
    d = tmp_path_factory.mktemp("plots")
    return record(d / "run1.h5", threads=2)


@pytest.fixture(scope="module")
def ranks3(tmp_path_factory):
    """A merged file of three ranks, rank 2 the straggler (30 x slower: its
    calls last milliseconds, so one preemption of a loaded machine, which
    can stretch a tens-of-microseconds call of rank 0 to a millisecond,
    does not make rank 0 look slower)."""
    if not CLI.exists():
        pytest.skip(f"{CLI} is missing: build first")
    d = tmp_path_factory.mktemp("ranks")
    parts = []
    for rank in range(3):
        p = record(d / f"r{rank}.h5", iters=3, threads=0, slow=30.0 if rank == 2 else 1.0)
        set_rank(p, rank, 3)
        parts.append(p)
    out = d / "merged.h5"
    r = subprocess.run([str(CLI), "merge", "-o", str(out), *map(str, parts)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert {x.rank for x in spanscope.read(out).rows} == {0, 1, 2}
    return out


def check_png(path):
    data = pathlib.Path(path).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    w, h = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert w > 100 and h > 100
    return w, h


def svg_texts(path):
    """The SVG parsed, and every text it draws (matplotlib writes each
    text as a <!-- comment --> before its glyph paths; svg.fonttype none
    would write <text>: both are looked at)."""
    root = ET.parse(path).getroot()
    assert root.tag == SVG_NS + "svg"
    raw = pathlib.Path(path).read_text(encoding="utf-8")
    return raw


def render(fn, data, tmp_path, stem, **kw):
    """fn drawn to PNG and SVG; returns (figure, svg text)."""
    png, svg = tmp_path / f"{stem}.png", tmp_path / f"{stem}.svg"
    fig = fn(data, filepath=png, verbose=False, **kw)
    check_png(png)
    fig2 = fn(data, filepath=svg, verbose=False, **kw)
    assert type(fig).__name__ == "Figure" and type(fig2).__name__ == "Figure"
    return fig, svg_texts(svg)


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


@pytest.fixture(autouse=True)
def _svg_text_as_text():
    """Text in SVG as <text> elements (searchable), as a user's rcParams may."""
    import matplotlib
    with matplotlib.rc_context({"svg.fonttype": "none"}):
        yield


# --- each plot ---------------------------------------------------------------

def test_gantt(run1, tmp_path):
    data = tmp_path / "gantt.csv"
    fig, svg = render(plots.plot_gantt, run1, tmp_path, "gantt", data_filepath=data)
    for name in REGIONS:
        assert f">{name}<" in svg  # the legend
    assert "thread" in svg and "depth 2" in svg  # lanes per thread, per depth
    rows = read_csv(data)
    res = spanscope.read(run1)
    for name in REGIONS:  # every call drawn once
        assert sum(r["region"] == name for r in rows) == res[name].num_calls
    # nesting: leaf under inner under outer is depth 2 on the main thread
    assert {int(r["depth"]) for r in rows if r["region"] == "outer"} == {0}
    assert {int(r["depth"]) for r in rows if r["region"] == "inner"} == {1}
    assert {int(r["depth"]) for r in rows if r["region"] == "leaf"} == {1, 2}
    assert len({r["thread"] for r in rows}) == 3  # main + 2 workers
    # filters and windows
    plots.plot_gantt(run1, include="outer", data_filepath=data, verbose=False)
    assert {r["region"] for r in read_csv(data)} == {"outer"}
    plots.plot_gantt(run1, collapse_depth=0, data_filepath=data, verbose=False)
    assert {int(r["depth"]) for r in read_csv(data)} == {0}
    plots.plot_gantt(run1, aggregate_calls=100, include="outer", data_filepath=data,
                     verbose=False)
    (bar,) = read_csv(data)  # 4 outer calls as one bar from first start to last end
    outer = res["outer"]
    assert float(bar["duration_s"]) == pytest.approx(
        (outer.end_ns.max() - outer.start_ns.min()) * 1e-9)


def test_gantt_ranks(ranks3, tmp_path):
    data = tmp_path / "g.csv"
    fig, svg = render(plots.plot_gantt, ranks3, tmp_path, "gantt3", data_filepath=data)
    for rank in range(3):
        assert f"rank {rank}" in svg
    assert {r["rank"] for r in read_csv(data)} == {"0", "1", "2"}
    plots.plot_gantt(ranks3, ranks=[1], data_filepath=data, verbose=False)
    assert {r["rank"] for r in read_csv(data)} == {"1"}


def test_flame_chart(run1, tmp_path):
    data = tmp_path / "fc.csv"
    fig, svg = render(plots.plot_flame_chart, run1, tmp_path, "flamechart",
                      data_filepath=data)
    assert plots.plot_flame is plots.plot_flame_chart  # scope-profiler's alias
    for name in REGIONS:
        assert f">{name}<" in svg
    for d in range(3):
        assert f"depth {d}" in svg
    rows = read_csv(data)
    assert len(rows) == sum(spanscope.read(run1)[n].num_calls for n in REGIONS)


def test_flame_graph(run1, tmp_path):
    data = tmp_path / "fg.csv"
    fig, svg = render(plots.plot_flame_graph, run1, tmp_path, "flamegraph",
                      data_filepath=data)
    rows = {r["stack"]: r for r in read_csv(data)}
    res = spanscope.read(run1)
    # the stacks of the recording, aggregated: leaf appears under two callers
    assert set(rows) == {"outer", "outer;inner", "outer;inner;leaf", "worker", "worker;leaf"}
    assert int(rows["outer;inner;leaf"]["calls"]) == 8
    assert int(rows["worker;leaf"]["calls"]) == 8  # 2 threads x 4
    assert float(rows["outer"]["total_s"]) == pytest.approx(res["outer"].total_ns * 1e-9)
    leaf_total = res["leaf"].total_ns * 1e-9
    assert (float(rows["outer;inner;leaf"]["total_s"]) + float(rows["worker;leaf"]["total_s"])
            == pytest.approx(leaf_total))
    for name in ("outer", "inner", "leaf", "worker"):
        assert f">{name}<" in svg


def test_durations(run1, ranks3, tmp_path):
    data = tmp_path / "d.csv"
    fig, svg = render(plots.plot_durations, [run1, ranks3], tmp_path, "durations",
                      data_filepath=data, labels=["one", "merged"])
    for name in REGIONS:
        assert f">{name}<" in svg
    assert ">one<" in svg and ">merged<" in svg  # the runs' legend
    rows = read_csv(data)
    res = spanscope.read(run1)
    got = {r["region"]: float(r["duration_s"]) for r in rows if r["run"] == "one"}
    for name in REGIONS:
        assert got[name] == pytest.approx(res[name].total_ns * 1e-9)
    # several metrics: one panel each; sort and cut
    fig = plots.plot_durations(run1, metrics=["avg", "max", "first"], sort_by="total",
                               top_n=2, data_filepath=data, verbose=False)
    assert len(fig.axes) == 3
    rows = read_csv(data)
    totals = sorted(REGIONS, key=lambda n: -res[n].total_ns)[:2]
    assert [r["region"] for r in rows if r["metric"] == "avg"] == totals
    first = {r["region"]: float(r["duration_s"]) for r in rows if r["metric"] == "first"}
    for n in totals:
        o = np.argmin(res[n].start_ns)
        assert first[n] == pytest.approx(res[n].durations_ns[o] * 1e-9)


def test_histogram(run1, tmp_path):
    data = tmp_path / "h.csv"
    fig, svg = render(plots.plot_duration_histogram, run1, tmp_path, "hist", bins=12,
                      data_filepath=data)
    rows = read_csv(data)
    res = spanscope.read(run1)
    for name in REGIONS:
        assert f">{name}<" in svg
        mine = [r for r in rows if r["region"] == name]
        assert len(mine) == 12 and sum(int(r["calls"]) for r in mine) == res[name].num_calls
    render(plots.plot_duration_histogram, run1, tmp_path, "hist_log", log_scale=True)


def test_imbalance_and_heatmap(ranks3, tmp_path):
    data = tmp_path / "i.csv"
    fig, svg = render(plots.plot_imbalance, ranks3, tmp_path, "imb", data_filepath=data)
    for rank in range(3):
        assert f"rank {rank}" in svg
    rows = read_csv(data)
    res = spanscope.read(ranks3)
    for name in ("outer", "inner", "leaf"):
        per = {int(r["rank"]): float(r["total_s"]) for r in rows if r["region"] == name}
        assert per == {k: pytest.approx(v.total_ns * 1e-9) for k, v in res.regions[name].items()}
    fig, svg = render(plots.plot_rank_heatmap, ranks3, tmp_path, "heat", data_filepath=data)
    rows = read_csv(data)
    assert len(rows) == 3 * 3  # ranks x regions (outer, inner, leaf)
    for name in ("outer", "inner", "leaf"):
        assert f">{name}<" in svg
    # exclusive: the fold's self times
    plots.plot_rank_heatmap(ranks3, exclusive=True, data_filepath=data, verbose=False)
    got = {(r["region"], int(r["rank"])): float(r["self_s"]) for r in read_csv(data)}
    for name, per in res.regions.items():
        for rank, reg in per.items():
            assert got[name, rank] == pytest.approx(reg.self_ns.sum() * 1e-9)
    assert got["outer", 0] < res.regions["outer"][0].total_ns * 1e-9


def test_timeseries(ranks3, tmp_path):
    data = tmp_path / "t.csv"
    fig, svg = render(plots.plot_duration_timeseries, ranks3, tmp_path, "ts",
                      data_filepath=data)
    res = spanscope.read(ranks3)
    rows = read_csv(data)
    outer = [r for r in rows if r["region"] == "outer"]
    assert len(outer) == 3  # three calls per rank
    first = [res.regions["outer"][k].durations_ns[0] * 1e-9 for k in range(3)]
    assert float(outer[0]["min_s"]) == pytest.approx(min(first))
    assert float(outer[0]["max_s"]) == pytest.approx(max(first))
    assert f">outer<" in svg


def test_timeline_density(run1, tmp_path):
    data = tmp_path / "td.csv"
    fig, svg = render(plots.plot_timeline_density, run1, tmp_path, "dens", bins=10,
                      data_filepath=data)
    res = spanscope.read(run1)
    rows = read_csv(data)
    for name in REGIONS:  # the bins' seconds add up to the region's total
        got = sum(float(r["seconds"]) for r in rows if r["region"] == name)
        assert got == pytest.approx(res[name].total_ns * 1e-9, rel=1e-6)
        assert f">{name}<" in svg


@pytest.fixture(scope="module")
def scaling_runs(tmp_path_factory):
    """Runs of 1, 2 and 4 ranks (merged files), each rank doing 1/n of the
    work: a strong-scaling series."""
    if not CLI.exists():
        pytest.skip(f"{CLI} is missing: build first")
    d = tmp_path_factory.mktemp("scaling")
    out = []
    for n in (1, 2, 4):
        parts = []
        for rank in range(n):
            p = record(d / f"s{n}_{rank}.h5", iters=2, threads=0, slow=4.0 / n)
            set_rank(p, rank, n)
            parts.append(p)
        m = d / f"n{n}.h5"
        subprocess.run([str(CLI), "merge", "-o", str(m), *map(str, parts)], check=True,
                       capture_output=True, timeout=120)
        out.append(m)
    return out


def test_speedup_and_efficiency(scaling_runs, tmp_path):
    data = tmp_path / "s.csv"
    fig, svg = render(plots.plot_speedup, scaling_runs, tmp_path, "speedup",
                      data_filepath=data)
    assert ">ideal<" in svg and ">outer<" in svg
    rows = read_csv(data)
    outer = {int(r["num_ranks"]): float(r["speedup"]) for r in rows if r["region"] == "outer"}
    assert set(outer) == {1, 2, 4} and outer[1] == 1.0
    means = {n: spanscope.read(p) for n, p in zip((1, 2, 4), scaling_runs)}

    def mean(res):
        d = np.concatenate([r.durations_ns for r in res.regions["outer"].values()])
        return d.mean()
    assert outer[4] == pytest.approx(mean(means[1]) / mean(means[4]))
    fig, svg = render(plots.plot_scaling_efficiency, scaling_runs, tmp_path, "eff",
                      data_filepath=data)
    eff = {int(r["num_ranks"]): float(r["efficiency"]) for r in read_csv(data)
           if r["region"] == "outer"}
    assert eff[4] == pytest.approx(outer[4] / 4)


def test_weak_scaling(scaling_runs, tmp_path):
    data = tmp_path / "w.csv"
    fig, svg = render(plots.plot_weak_scaling, scaling_runs, tmp_path, "weak",
                      data_filepath=data)
    assert ">ideal<" in svg and ">outer<" in svg
    rows = [r for r in read_csv(data) if r["region"] == "inner"]
    m = {int(r["num_ranks"]): float(r["mean_duration_s"]) for r in rows}
    rel = {int(r["num_ranks"]): float(r["relative_runtime"]) for r in rows}
    assert rel == {k: pytest.approx(m[k] / m[1]) for k in (1, 2, 4)}
    plots.plot_weak_scaling_efficiency(scaling_runs, work_per_rank=[5, 5, 5],
                                       data_filepath=data, verbose=False)
    eff = {int(r["num_ranks"]): float(r["efficiency"]) for r in read_csv(data)
           if r["region"] == "inner"}
    assert eff == {k: pytest.approx(m[1] / m[k]) for k in (1, 2, 4)}
    with pytest.raises(ValueError, match="work_per_rank differs"):
        plots.plot_weak_scaling_efficiency(scaling_runs, work_per_rank=[5, 10, 20])
    with pytest.raises(ValueError, match="3 values for 2 runs"):
        plots.plot_weak_scaling_efficiency(scaling_runs[:2], work_per_rank=[1, 1, 1])


def test_callgraph(run1, tmp_path):
    """scope-profiler 0.7.5's call graph: compact, an edge per distinct
    (caller, callee) pair of the fold's nesting; per call, a row per call
    with its call and parent id; (figure, axis) with return_fig, else None."""
    data = tmp_path / "cg.csv"
    png = tmp_path / "cg.png"
    assert plots.plot_callgraph(run1, compact=True, filepath=png, data_filepath=data,
                                verbose=False) is None
    check_png(png)
    edges = {(r["parent"], r["child"]) for r in read_csv(data)}
    # the fold's parents: outer > inner > leaf, worker > leaf
    assert edges == {("outer", "inner"), ("inner", "leaf"), ("worker", "leaf")}
    fig, ax = plots.plot_callgraph(run1, compact=True, verbose=False, return_fig=True)
    assert {t.get_text() for t in ax.texts} == set(REGIONS)
    assert len(ax.collections[0].get_offsets()) == len(REGIONS)
    plots.plot_callgraph(run1, data_filepath=data, verbose=False)  # a node per call
    rows = read_csv(data)
    assert list(rows[0]) == ["call_id", "parent_id", "name", "depth"]
    assert len(rows) == 4 + 4 + 8 + 8 + 8
    by_id = {r["call_id"]: r for r in rows}
    for r in rows:  # a leaf's parent is an inner or a worker call
        if r["name"] == "leaf":
            assert by_id[r["parent_id"]]["name"] in ("inner", "worker")
    with pytest.raises(ValueError, match="one profiling file at a time"):
        plots.plot_callgraph([run1, run1])
    with pytest.raises(ValueError, match="No calls recorded"):
        plots.plot_callgraph(run1, include=["nothing_like_this"], verbose=False)


# the LIKWID plots draw (tests/python/test_likwid.py)
# (the perf-event plots draw: tests/python/test_perf_events.py)
def test_perf_event_plots_of_a_file_without_counters(run1):
    assert plots.available_perf_event_metrics(run1) == []
    with pytest.raises(ValueError, match="None of the selected files recorded perf-event data"):
        plots.plot_perf_events(run1)


def test_return_fig_and_json_data(run1, tmp_path):
    fig, axes = plots.plot_gantt(run1, return_fig=True, verbose=False)
    assert len(axes) == 1 and axes[0].figure is fig
    out = tmp_path / "g.json"
    plots.plot_durations(run1, data_filepath=out, data_format="json", verbose=False)
    doc = json.loads(out.read_text())
    assert doc["format"] == "scope-profiler-plot-data" and doc["plot"] == "durations"
    assert {row[2] for row in doc["rows"]} == set(REGIONS)


def test_results_object_and_package_names(run1, tmp_path):
    """A Results from spanscope.read works like its path; the plot_*
    names are on the package too (imported lazily)."""
    res = spanscope.read(run1)
    out = tmp_path / "a.svg"
    spanscope.plot_flame_graph(res, filepath=out, verbose=False)
    ET.parse(out)
    assert spanscope.plots is plots
    assert spanscope.plot_gantt is plots.plot_gantt


# --- errors ------------------------------------------------------------------------

def test_errors(run1, tmp_path):
    with pytest.raises(ValueError, match="no regions matched"):
        plots.plot_gantt(run1, include="nothing-like-this", verbose=False)
    with pytest.raises(ValueError, match=r"no rank \[7\]"):
        plots.plot_imbalance(run1, ranks=7, verbose=False)
    with pytest.raises(ValueError, match="metric 'median'"):
        plots.plot_durations(run1, metric="median", verbose=False)
    with pytest.raises(ValueError, match="backend='bokeh'.*'matplotlib' or 'plotly'"):
        plots.plot_gantt(run1, backend="bokeh")
    with pytest.raises(ValueError, match="image format"):
        plots.plot_gantt(run1, filepath=tmp_path / "x.bogus")
    with pytest.raises(ValueError, match="at least two runs"):
        plots.plot_speedup(run1, verbose=False)
    with pytest.raises(ValueError, match="'omp_threads' not found for .*Available fields"):
        plots.plot_speedup([run1, run1], x_field="omp_threads", verbose=False)
    # scope-profiler's: a one-rank run is on one node
    with pytest.raises(ValueError, match="every run has num_nodes=1"):
        plots.plot_speedup([run1, run1], x_field="num_nodes", verbose=False)
    with pytest.raises(ValueError, match="combine_regions group 'x' matched no regions"):
        plots.plot_durations(run1, combine_regions={"x": ["nothing-like-this"]})
    with pytest.raises(TypeError, match="not int"):
        plots.plot_gantt(42)
    with pytest.raises(OSError):
        plots.plot_gantt(tmp_path / "missing.h5")
    bad = tmp_path / "bad.h5"
    bad.write_bytes(b"not an hdf5 file at all")
    with pytest.raises((OSError, ValueError)):
        plots.plot_gantt(bad)
    assert not (tmp_path / "x.bogus").exists()


def test_aggregate_file(tmp_path):
    """An aggregate file has statistics only: the bars work, the plots
    that need calls say so."""
    p = tmp_path / "agg.h5"
    ProfileManager.setup(file_path=str(p), aggregation_mode=True)
    for _ in range(5):
        with ProfileManager.region("step"):
            spin(10_000)
    ProfileManager.finalize(verbose=False)
    data = tmp_path / "a.csv"
    plots.plot_durations(p, metric="avg", data_filepath=data, verbose=False)
    (row,) = read_csv(data)
    assert float(row["duration_s"]) > 0
    with pytest.raises(ValueError, match="aggregate file"):
        plots.plot_gantt(p, verbose=False)


def test_missing_matplotlib_names_the_extra(run1, tmp_path):
    code = ("import sys; sys.modules['matplotlib'] = None; "
            "from spanscope import plots; "
            f"plots.plot_gantt({str(run1)!r}, filepath={str(tmp_path / 'x.png')!r})")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode != 0
    assert "ImportError: spanscope.plots needs matplotlib" in r.stderr
    assert "spanscope[plot]" in r.stderr
    # importing spanscope (and spanscope.plots) needs no matplotlib
    r = subprocess.run([sys.executable, "-c", "import sys; sys.modules['matplotlib'] = None; "
                        "import spanscope, spanscope.plots"], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr


# --- the command line ----------------------------------------------------------------

def cli(*args):
    return subprocess.run([sys.executable, "-m", "spanscope.plots", *map(str, args)],
                          capture_output=True, text=True, timeout=300)


def test_cli_every_kind(run1, ranks3, tmp_path):
    for kind in plots.KINDS:
        files = ([run1, ranks3] if kind in ("speedup", "efficiency", "weak-scaling",
                                            "weak-efficiency") else [ranks3])
        for ext in ("png", "svg"):
            out = tmp_path / f"{kind}.{ext}"
            code = plots.main([kind, *map(str, files), "-o", str(out)])
            assert code == 0, kind
            if ext == "png":
                check_png(out)
            else:
                ET.parse(out)


def test_cli_options_and_data(ranks3, tmp_path):
    out, data = tmp_path / "h.svg", tmp_path / "h.csv"
    r = cli("heatmap", ranks3, "-o", out, "--exclusive", "--ranks", "0,2", "--data", data,
            "--include", "outer", "--include", "inner")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "" and r.stderr == ""
    rows = read_csv(data)
    assert {r["rank"] for r in rows} == {"0", "2"}
    assert {r["region"] for r in rows} == {"outer", "inner"}


def test_cli_help_and_errors(run1, tmp_path):
    r = cli("--help")
    assert r.returncode == 0 and "usage: spanscope plot" in r.stdout
    assert "flame-graph" in r.stdout and "spanscope[plot]" in r.stdout
    out = tmp_path / "o.png"
    cases = [
        (("bogus", run1, "-o", out), 2, "invalid choice"),
        (("gantt", run1), 2, "-o/--output"),
        (("gantt", tmp_path / "missing.h5", "-o", out), 1, "missing.h5"),
        (("gantt", run1, "-o", tmp_path / "o.xyz"), 2, "image format"),
        (("gantt", run1, "-o", out, "--bins", "3"), 2, "--bins does not apply"),
        (("gantt", run1, "-o", out, "--ranks", "a,b"), 2, "--ranks takes numbers"),
        (("gantt", run1, "-o", out, "--include", "zzz"), 1, "no regions matched"),
        (("speedup", run1, "-o", out), 1, "at least two runs"),
        (("durations", run1, "-o", out, "--data", tmp_path / "d.txt"), 2,
         ".csv, .json or .parquet"),
    ]
    for args, code, msg in cases:
        r = cli(*args)
        assert r.returncode == code, (args, r.stderr)
        assert msg in r.stderr, (args, r.stderr)
        assert r.stderr.strip().count("\n") == 0 or code == 2  # one line (argparse: usage+line)
    assert not out.exists()


# --- files written by the real scope-profiler 0.7.5 -----------------------------------

SP_RECORD = r"""
import sys, threading, time
from scope_profiler import ProfileManager

def spin(ns):
    t = time.perf_counter_ns()
    while time.perf_counter_ns() - t < ns:
        pass

ProfileManager.setup(file_path=sys.argv[1], track_threads=True)

def work():
    for _ in range(3):
        with ProfileManager.region("sp_worker"):
            spin(20_000)

t = threading.Thread(target=work)
t.start()
for _ in range(4):
    with ProfileManager.region("sp_outer"):
        with ProfileManager.region("sp_inner"):
            spin(10_000)
t.join()
ProfileManager.finalize()
"""


@pytest.fixture(scope="module")
def sp_file(tmp_path_factory):
    """A recording by scope-profiler 0.7.5 itself (its own ProfileManager,
    its own HDF5 writer), in a process of its own."""
    pytest.importorskip("scope_profiler")
    out = tmp_path_factory.mktemp("sp") / "sp.h5"
    r = subprocess.run([sys.executable, "-c", SP_RECORD, str(out)], capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    return out


def test_scope_profilers_own_file(sp_file, tmp_path):
    """Every plot of a file written by scope-profiler 0.7.5, with the
    nesting the fold finds in it; scope-profiler's own results object
    works as the input too (its file goes through spanscope.read)."""
    res = spanscope.read(sp_file)
    assert {"sp_outer", "sp_inner", "sp_worker"} <= set(res.regions)
    data = tmp_path / "g.csv"
    fig, svg = render(plots.plot_gantt, sp_file, tmp_path, "spg", data_filepath=data)
    rows = read_csv(data)
    assert {int(r["depth"]) for r in rows if r["region"] == "sp_inner"} == {1}
    assert sum(r["region"] == "sp_outer" for r in rows) == 4
    for name in ("sp_outer", "sp_inner", "sp_worker"):
        assert f">{name}<" in svg
    plots.plot_flame_graph(sp_file, data_filepath=data, verbose=False)
    stacks = {r["stack"]: int(r["calls"]) for r in read_csv(data)}
    assert stacks["sp_outer;sp_inner"] == 4 and stacks["sp_worker"] == 3
    for kind in plots.KINDS:
        if kind in ("speedup", "efficiency", "weak-scaling", "weak-efficiency"):
            continue
        out = tmp_path / f"sp_{kind}.png"
        assert plots.main([kind, str(sp_file), "-o", str(out)]) == 0, kind
        check_png(out)
    from scope_profiler import read_h5
    out = tmp_path / "sp_obj.svg"
    plots.plot_durations(read_h5(str(sp_file)), filepath=out, data_filepath=data,
                         verbose=False)
    got = {r["region"]: float(r["duration_s"]) for r in read_csv(data)}
    assert got["sp_outer"] == pytest.approx(res["sp_outer"].total_ns * 1e-9)


def test_scope_profiler_fixture(tmp_path):
    """scope-profiler's schema-3 fixture (tests/data) plots too."""
    fx = pathlib.Path(__file__).parents[2] / "tests" / "data" / "scope-profiler-schema3-fixture.h5"
    if not fx.exists():
        pytest.skip("the fixture is missing")
    for fn in (plots.plot_gantt, plots.plot_durations, plots.plot_flame_graph,
               plots.plot_rank_heatmap):
        render(fn, fx, tmp_path, fn.__name__)


# --- backend="plotly" ------------------------------------------------------------------
#
# plotly is the optional `plotly` extra; `make deps` installs it, so these run
# in CI; they skip (saying why) only where it is absent.

def need_plotly():
    return pytest.importorskip("plotly", reason="plotly (the 'plotly' extra) is not "
                               "installed: pip install 'spanscope[plotly]'")


class _HtmlScripts(__import__("html.parser").parser.HTMLParser):
    """The <div>s and <script>s of an HTML page, as a browser parses it."""

    def __init__(self):
        super().__init__()
        self.divs, self.scripts, self._in = 0, [], False

    def handle_starttag(self, tag, attrs):
        self.divs += tag == "div"
        self._in = tag == "script"
        if self._in:
            self.scripts.append("")

    def handle_endtag(self, tag):
        self._in = False if tag == "script" else self._in

    def handle_data(self, data):
        if self._in:
            self.scripts[-1] += data


def check_html(path, fig):
    """A page plotly's write_html wrote for fig: parses as HTML, holds the
    plotly.js library and a newPlot call with fig's traces (the trace
    names in the page)."""
    page = _HtmlScripts()
    page.feed(pathlib.Path(path).read_text(encoding="utf-8"))
    assert page.divs >= 1
    calls = [s for s in page.scripts if "Plotly.newPlot" in s]
    assert len(calls) == 1
    # the library itself inside (no network needed to open the page)
    assert any(s.lstrip().startswith("/**\n* plotly.js v") and len(s) > 1_000_000
               for s in page.scripts)
    for t in fig.data:
        if t.name:
            assert json.dumps(t.name) in calls[0]
    return calls[0]


def plotly_html(fn, data, tmp_path, stem, **kw):
    """fn drawn with backend="plotly" to .html; returns the figure."""
    need_plotly()
    import plotly.graph_objects as go
    out = tmp_path / f"{stem}.html"
    fig = fn(data, filepath=out, backend="plotly", verbose=False, **kw)
    assert isinstance(fig, go.Figure)
    check_html(out, fig)
    return fig


def legend_names(fig):
    return {t.name for t in fig.data if t.showlegend}


def test_plotly_gantt_and_flame_chart(run1, tmp_path):
    for fn in (plots.plot_gantt, plots.plot_flame_chart):
        fig = plotly_html(fn, run1, tmp_path, fn.__name__)
        assert legend_names(fig) == set(REGIONS) and fig.layout.showlegend
        assert {t.type for t in fig.data} == {"bar"}
        assert {t.orientation for t in fig.data} == {"h"}
        # one bar per call: 4 outer, 4 inner, 8 + 8 leaf, 8 worker
        assert sum(len(t.x) for t in fig.data) == 32
        leaf = [t for t in fig.data if t.name == "leaf"]
        res = spanscope.read(run1)
        assert sum(sum(t.x) for t in leaf) == pytest.approx(res["leaf"].total_ns * 1e-9)
        assert fig.layout.title.text is None  # the panel's title is its subplot title
        assert fig.layout.annotations[0].text.startswith(
            "Gantt chart" if fn is plots.plot_gantt else "Flame chart")


def test_plotly_flame_graph_durations_heatmap(run1, ranks3, tmp_path):
    res = spanscope.read(run1)
    fig = plotly_html(plots.plot_flame_graph, run1, tmp_path, "fg")
    # a box per stack: outer, outer;inner, outer;inner;leaf, worker, worker;leaf
    assert len(fig.data) == 5 and legend_names(fig) == set(REGIONS)
    roots = [t for t in fig.data if t.y[0] == 0]
    assert sorted(t.name for t in roots) == ["outer", "worker"]
    fig = plotly_html(plots.plot_durations, run1, tmp_path, "dur")
    (bars,) = fig.data
    assert bars.type == "bar" and bars.name == "run1"
    want = {n: res[n].total_ns * 1e-9 for n in REGIONS}
    got = dict(zip(fig.layout.xaxis.ticktext, bars.y))
    assert got == pytest.approx(want)
    fig = plotly_html(plots.plot_rank_heatmap, ranks3, tmp_path, "hm")
    (hm,) = fig.data
    z = np.asarray(hm.z)
    assert hm.type == "heatmap" and z.shape == (3, 3)  # ranks x outer, inner, leaf
    m = spanscope.read(ranks3)
    # row r is rank r's totals, every rank (not "rank 2 slower than rank 0":
    # a 29 ms preemption of rank 0's outer made that false in a loaded run)
    for r in range(3):
        assert z[r] == pytest.approx([m.regions[n][r].total_ns * 1e-9
                                      for n in fig.layout.xaxis.ticktext]), r
    assert hm.showscale and fig.layout.yaxis.autorange == "reversed"


def test_plotly_lines_and_scaling(run1, ranks3, scaling_runs, tmp_path):
    fig = plotly_html(plots.plot_duration_histogram, run1, tmp_path, "hist", bins=5)
    assert {t.name for t in fig.data} == set(REGIONS)
    assert {len(t.x) for t in fig.data} == {5}
    fig = plotly_html(plots.plot_imbalance, ranks3, tmp_path, "imb")
    assert {t.name for t in fig.data} == {"outer", "inner", "leaf"}
    assert len(fig.layout.shapes) == 3  # a dashed mean line per region
    fig = plotly_html(plots.plot_duration_timeseries, ranks3, tmp_path, "ts")
    named = [t for t in fig.data if t.name]
    assert {t.name for t in named} == {"outer", "inner", "leaf"}
    assert any(t.fill == "tonexty" for t in fig.data)  # the min-max band over ranks
    fig = plotly_html(plots.plot_timeline_density, run1, tmp_path, "dens", bins=20)
    assert fig.data[0].type == "heatmap" and np.asarray(fig.data[0].z).shape == (4, 20)
    fig = plotly_html(plots.plot_speedup, scaling_runs, tmp_path, "sp")
    assert "ideal" in {t.name for t in fig.data}


def test_plotly_return_fig_show_and_image_errors(run1, tmp_path, monkeypatch):
    need_plotly()
    import plotly.graph_objects as go
    fig = plots.plot_gantt(run1, backend="plotly", return_fig=True, verbose=False)
    assert isinstance(fig, go.Figure)  # the figure itself, as scope-profiler's
    shown = []
    monkeypatch.setattr(go.Figure, "show", lambda self, *a, **k: shown.append(self))
    plots.plot_durations(run1, backend="plotly", show=True, verbose=False)
    assert len(shown) == 1

    def broken(self, *a, **k):
        raise ValueError("Image export using the 'kaleido' engine requires kaleido")
    monkeypatch.setattr(go.Figure, "write_image", broken)
    with pytest.raises(RuntimeError, match="install kaleido") as err:
        plots.plot_gantt(run1, backend="plotly", filepath=tmp_path / "g.png")
    assert isinstance(err.value.__cause__, ValueError)
    with pytest.raises(ValueError, match="image format"):
        plots.plot_gantt(run1, backend="plotly", filepath=tmp_path / "g.bmp")


def test_plotly_images_with_kaleido(run1, tmp_path):
    """PNG and SVG through write_image where kaleido is installed (it is
    not a dependency: it drives a headless Chrome); without it the export
    fails with the RuntimeError naming it."""
    need_plotly()
    try:
        import kaleido  # noqa: F401
    except ImportError:
        with pytest.raises(RuntimeError, match="kaleido"):
            plots.plot_gantt(run1, backend="plotly", filepath=tmp_path / "g.png")
        pytest.skip("kaleido is not installed: checked the error, not the images")
    plots.plot_flame_graph(run1, backend="plotly", filepath=tmp_path / "f.png")
    check_png(tmp_path / "f.png")
    plots.plot_flame_graph(run1, backend="plotly", filepath=tmp_path / "f.svg")
    svg = svg_texts(tmp_path / "f.svg")
    assert "worker" in svg


def test_plotly_without_matplotlib_and_missing_plotly(run1, tmp_path):
    """The plotly backend needs no matplotlib (the colours come from
    tab20's table); without plotly the error names the extra, before
    anything is drawn."""
    need_plotly()
    out = tmp_path / "g.html"
    code = ("import sys; sys.modules['matplotlib'] = None; "
            "from spanscope import plots; "
            f"f = plots.plot_gantt({str(run1)!r}, backend='plotly', filepath={str(out)!r}, "
            "verbose=False); print(sorted({t.marker.color for t in f.data}))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert out.exists()
    mpl = plots.plot_gantt(run1, backend="plotly", verbose=False)
    assert r.stdout.strip() == str(sorted({t.marker.color for t in mpl.data}))
    code = ("import sys; sys.modules['plotly'] = None; "
            "from spanscope import plots; "
            f"plots.plot_gantt({str(run1)!r}, backend='plotly', filepath={str(out)!r} + '2')")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode != 0
    assert "ImportError: spanscope.plots' backend='plotly' needs plotly" in r.stderr
    assert "spanscope[plotly]" in r.stderr
    assert not pathlib.Path(str(out) + "2").exists()


# --- combine_regions and stack_children ---------------------------------------------------

def test_combine_regions(run1, tmp_path):
    res = spanscope.read(run1)
    data = tmp_path / "c.csv"
    # order of first start: worker, leaf, outer, inner; "work" takes worker and leaf
    fig, svg = render(plots.plot_durations, run1, tmp_path, "comb",
                      combine_regions={"work": ["worker", "lea"]}, data_filepath=data)
    got = {r["region"]: float(r["duration_s"]) for r in read_csv(data)}
    assert list(got) == ["work", "outer", "inner"]
    assert got["work"] == pytest.approx((res["worker"].total_ns + res["leaf"].total_ns) * 1e-9)
    assert ">work<" in svg and ">worker<" not in svg
    # pooled as one region's calls: avg over the 8 + 16 calls, max over all
    plots.plot_durations(run1, combine_regions={"work": "worker|leaf"}, metrics=["avg", "max"],
                         data_filepath=data, verbose=False)
    rows = {(r["metric"], r["region"]): float(r["duration_s"]) for r in read_csv(data)}
    assert rows["avg", "work"] == pytest.approx(
        (res["worker"].total_ns + res["leaf"].total_ns) / 24 * 1e-9)
    assert rows["max", "work"] == pytest.approx(
        max(res["worker"].durations_ns.max(), res["leaf"].durations_ns.max()) * 1e-9)
    # a region matching two groups belongs to the first listed
    plots.plot_durations(run1, combine_regions={"a": ["outer", "inner"], "b": ["inner", "leaf"]},
                         data_filepath=data, verbose=False)
    got = {r["region"]: float(r["duration_s"]) for r in read_csv(data)}
    assert list(got) == ["worker", "b", "a"]
    assert got["b"] == pytest.approx(res["leaf"].total_ns * 1e-9)
    assert got["a"] == pytest.approx((res["outer"].total_ns + res["inner"].total_ns) * 1e-9)
    with pytest.raises(ValueError, match=r"group 'x' matched no regions \(patterns: \['zzz'\]\)"):
        plots.plot_durations(run1, combine_regions={"x": ["zzz"]}, verbose=False)
    with pytest.raises(ValueError, match=r"group name\(s\) \['leaf'\] collide"):
        plots.plot_durations(run1, combine_regions={"leaf": ["outer"]}, verbose=False)
    with pytest.raises(TypeError, match="combine_regions maps a bar's name"):
        plots.plot_durations(run1, combine_regions=["outer"], verbose=False)
    with pytest.raises(ValueError, match="matched no regions"):  # "b" takes nothing left
        plots.plot_durations(run1, combine_regions={"a": "inner", "b": "inner"}, verbose=False)


@pytest.mark.parametrize("groups", [
    {"work": ["worker", "lea"]}, {"a": ["outer", "inner"], "b": ["inner", "leaf"]},
    {"x": "o"}, {"leaf": ["outer"]}, {"outer": ["outer", "inner"]}, {"x": ["zzz"]},
    {"a": "inner", "b": "inner"}])
def test_combine_regions_as_scope_profiler(groups):
    """The bars and their members are those of scope-profiler 0.7.5's own
    _group_regions for the same names, errors included."""
    sp_group = pytest.importorskip("scope_profiler.plotting_scripts.durations")._group_regions
    names = ["worker", "leaf", "outer", "inner"]
    try:
        want = sp_group(names, groups)
    except ValueError as e:
        with pytest.raises(ValueError) as err:
            plots._distributions._group_regions(names, groups)
        assert str(err.value) == str(e)
        return
    assert plots._distributions._group_regions(names, groups) == want


def test_stack_children(run1, tmp_path):
    res = spanscope.read(run1)
    data = tmp_path / "s.csv"
    fig, svg = render(plots.plot_durations, run1, tmp_path, "stack", stack_children=True,
                      data_filepath=data)
    rows = read_csv(data)
    assert list(rows[0]) == ["metric", "run", "region", "segment", "duration_s"]
    seg = {(r["region"], r["segment"]): float(r["duration_s"]) for r in rows}
    # self time plus a segment per region called from it: the fold's parents
    assert seg == pytest.approx({
        ("worker", "self"): res["worker"].self_ns.sum() * 1e-9,
        ("worker", "leaf"): (res["worker"].total_ns - res["worker"].self_ns.sum()) * 1e-9,
        ("leaf", "self"): res["leaf"].total_ns * 1e-9,
        ("outer", "self"): res["outer"].self_ns.sum() * 1e-9,
        ("outer", "inner"): res["inner"].total_ns * 1e-9,
        ("inner", "self"): res["inner"].self_ns.sum() * 1e-9,
        ("inner", "leaf"): (res["inner"].total_ns - res["inner"].self_ns.sum()) * 1e-9})
    for name in REGIONS:  # a bar's segments add up to the bar (no recursion here)
        total = sum(v for (r, _), v in seg.items() if r == name)
        assert total == pytest.approx(res[name].total_ns * 1e-9)
    assert ">self<" in svg and "children stacked" in svg and ">segment<" in svg
    # avg: every segment over the bar's calls; a group's inner calls stay its self time
    plots.plot_durations(run1, stack_children=True, metric="avg", data_filepath=data,
                         combine_regions={"work": ["worker", "leaf"]}, verbose=False)
    seg = {(r["region"], r["segment"]): float(r["duration_s"]) for r in read_csv(data)}
    assert ("work", "leaf") not in seg and ("inner", "work") in seg
    assert seg["work", "self"] == pytest.approx(
        (res["worker"].self_ns.sum() + res["leaf"].self_ns.sum()) / 24 * 1e-9)
    assert seg["inner", "work"] == pytest.approx(
        (res["inner"].total_ns - res["inner"].self_ns.sum()) / 4 * 1e-9)
    with pytest.raises(ValueError, match=r"stack_children does not apply to metric\(s\) "
                       r"\['max'\]: only \['avg', 'total'\]"):
        plots.plot_durations(run1, stack_children=True, metrics=["total", "max"])


def test_stack_children_plotly(run1, tmp_path):
    fig = plotly_html(plots.plot_durations, run1, tmp_path, "stack", stack_children=True)
    assert [t.name for t in fig.data] == ["self", "leaf", "inner"]  # self, then by total
    assert fig.layout.barmode == "overlay" and legend_names(fig) == {"self", "leaf", "inner"}
    self_bar, leaf_bar, inner_bar = fig.data
    assert list(leaf_bar.base) == pytest.approx(list(self_bar.y))  # stacked on self
    top = np.asarray(inner_bar.base) + np.asarray(inner_bar.y)
    res = spanscope.read(run1)
    assert list(top) == pytest.approx([res[n].total_ns * 1e-9 for n in
                                       fig.layout.xaxis.ticktext])


def test_stack_children_as_scope_profiler(run1):
    """The segments are those scope-profiler 0.7.5 computes from the same
    file (its _stacked_segments, over its own reader and call stack)."""
    sp = pytest.importorskip("scope_profiler")
    from scope_profiler.plotting_scripts.durations import _stacked_segments
    sp_res = sp.read_h5(str(run1))
    for members in ({n: [n] for n in REGIONS}, {"work": ["worker", "leaf"],
                                                "outer": ["outer"], "inner": ["inner"]}):
        want = _stacked_segments(sp_res, members, ranks=None)
        run = plots._runs._as_runs(run1)[0]
        got = plots._distributions._stacked_segments(run, members, run.ranks)
        assert set(got) == set(want)
        for bar in want:
            assert got[bar] == pytest.approx(want[bar], rel=1e-9, abs=2.0), bar


def test_stack_children_needs_calls(tmp_path):
    p = tmp_path / "agg.h5"
    ProfileManager.setup(file_path=str(p), aggregation_mode=True)
    with ProfileManager.region("step"):
        spin(1000)
    ProfileManager.finalize(verbose=False)
    with pytest.raises(ValueError, match="aggregate file keeps no per-call events, and "
                       "stack_children needs them"):
        plots.plot_durations(p, stack_children=True)


# --- the fluid call graph -------------------------------------------------------------

def node_positions(fig):
    """{region: (x, y)} of a compact call graph: matplotlib's (figure,
    axis) from its markers and labels, plotly's from its marker trace."""
    if isinstance(fig, tuple):
        ax = fig[1]
        xy = ax.collections[0].get_offsets()
        return {t.get_text(): tuple(map(float, p)) for t, p in zip(ax.texts, xy)}
    nodes = fig.data[-1]
    return {t: (x, y) for t, x, y in zip(nodes.text, nodes.x, nodes.y)}


def test_fluid_callgraph(run1, tmp_path):
    data = tmp_path / "f.csv"
    fig = plots.plot_callgraph(run1, fluid=True, data_filepath=data, verbose=False,
                               return_fig=True)
    # fluid implies compact (as scope-profiler): a node per region
    edges = {(r["parent"], r["child"]) for r in read_csv(data)}
    assert edges == {("outer", "inner"), ("inner", "leaf"), ("worker", "leaf")}
    pos = node_positions(fig)
    assert set(pos) == set(REGIONS)
    xy = np.array(list(pos.values()))
    assert np.abs(xy).max() == pytest.approx(1.0)  # centred, scaled into [-1, 1]
    assert np.allclose(xy.mean(axis=0), 0.0, atol=1e-12)
    # not the layered layout: callers are not all above their callees
    assert len({round(y, 6) for _, y in xy}) == 4
    # deterministic: the same input, the same positions (both backends)
    again = node_positions(plots.plot_callgraph(run1, fluid=True, verbose=False,
                                                return_fig=True))
    assert again == pos
    if importlib.util.find_spec("plotly") is not None:
        fig = plotly_html(plots.plot_callgraph, run1, tmp_path, "fluid", fluid=True,
                          return_fig=True)
        got = node_positions(fig)
        assert set(got) == set(pos)
        for name in pos:
            assert got[name] == pytest.approx(pos[name], abs=1e-12)


def test_fluid_callgraph_as_scope_profiler(run1):
    """The same positions as scope-profiler 0.7.5's own fluid layout of the
    same file (its plotly figure's node trace): the same algorithm, the
    same node and edge order."""
    need_plotly()
    sp = pytest.importorskip("scope_profiler")
    from scope_profiler.plotting_scripts import plot_callgraph as sp_callgraph
    sp_fig = sp_callgraph(sp.read_h5(str(run1)), fluid=True, backend="plotly",
                          return_fig=True, verbose=False)
    nodes = sp_fig.data[-1]
    want = {t: (x, y) for t, x, y in zip(nodes.text, nodes.x, nodes.y)}
    got = node_positions(plots.plot_callgraph(run1, fluid=True, backend="plotly",
                                              verbose=False, return_fig=True))
    assert set(got) == set(want)
    for name in want:
        assert got[name] == pytest.approx(want[name], abs=1e-9), name


def test_fluid_positions_algorithm():
    """_fluid_positions on its own: one node is None's business (the
    caller's), a pair settles on the circle's diameter, a chain of three
    stays in order, and the result is the same twice."""
    p2 = plots._callgraph._fluid_positions(2, [(0, 1)])
    assert p2 == pytest.approx(np.array([[1.0, 0.0], [-1.0, 0.0]]), abs=1e-9)
    p3 = plots._callgraph._fluid_positions(3, [(0, 1), (1, 2)])
    assert np.array_equal(p3, plots._callgraph._fluid_positions(3, [(0, 1), (1, 2)]))
    d01, d12, d02 = (np.linalg.norm(p3[a] - p3[b]) for a, b in ((0, 1), (1, 2), (0, 2)))
    assert d02 > d01 and d02 > d12  # the ends of the chain are the farthest apart


# --- data_format="parquet" ----------------------------------------------------------------

def test_parquet_data(run1, tmp_path):
    pq = pytest.importorskip("pyarrow.parquet", reason="pyarrow (the 'parquet' extra) "
                             "is not installed: pip install 'spanscope[parquet]'")
    for fn, kw in ((plots.plot_gantt, {}), (plots.plot_durations, {"stack_children": True}),
                   (plots.plot_callgraph, {"fluid": True}),
                   (plots.plot_duration_histogram, {"bins": 4})):
        csv_path, pq_path = tmp_path / "d.csv", tmp_path / "d.parquet"
        fn(run1, data_filepath=csv_path, verbose=False, **kw)
        fn(run1, data_filepath=pq_path, data_format="parquet", verbose=False, **kw)
        table = pq.read_table(pq_path)
        rows = read_csv(csv_path)
        assert table.column_names == list(rows[0])
        assert table.num_rows == len(rows)
        got = table.to_pylist()
        for want, row in zip(rows, got):
            for k, v in want.items():
                if isinstance(row[k], float):
                    assert row[k] == pytest.approx(float(v)), (fn.__name__, k)
                else:
                    assert str(row[k]) == v, (fn.__name__, k)
        assert table.schema.metadata[b"format"] == b"scope-profiler-plot-data"
    assert pq.read_table(pq_path).schema.field("calls").type == "int64"


def test_parquet_errors(run1, tmp_path):
    out = tmp_path / "never.png"
    with pytest.raises(ValueError, match="data_format='xlsx'.*'csv', 'json', 'parquet'"):
        plots.plot_gantt(run1, filepath=out, data_filepath=tmp_path / "d.x",
                         data_format="xlsx")
    code = ("import sys; sys.modules['pyarrow'] = None; "
            "from spanscope import plots; "
            f"plots.plot_gantt({str(run1)!r}, filepath={str(out)!r}, "
            f"data_filepath={str(tmp_path / 'd.parquet')!r}, data_format='parquet')")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode != 0
    assert "ImportError: data_format='parquet' needs pyarrow" in r.stderr
    assert "spanscope[parquet]" in r.stderr
    assert not out.exists()  # refused before drawing


# --- the command line's new options ------------------------------------------------------

def test_cli_backend_combine_stack_fluid(run1, tmp_path):
    need_plotly()
    out, data = tmp_path / "d.html", tmp_path / "d.csv"
    assert plots.main(["durations", str(run1), "-o", str(out), "--backend", "plotly",
                       "--combine-regions", "work=worker,lea", "--stack-children",
                       "--data", str(data)]) == 0
    page = out.read_text()
    assert "Plotly.newPlot" in page and '"work"' in page
    rows = read_csv(data)
    assert {r["region"] for r in rows} == {"work", "outer", "inner"}
    assert "segment" in rows[0]
    # the short forms, and --format (scope-profiler's name) for --data-format
    out2 = tmp_path / "cg.svg"
    assert plots.main(["callgraph", str(run1), "-o", str(out2), "--fluid",
                       "--data", str(tmp_path / "cg.txt"), "--format", "json"]) == 0
    assert "leaf" in out2.read_text()  # the node labels (matplotlib: a comment per text)
    doc = json.loads((tmp_path / "cg.txt").read_text())
    assert doc["plot"] == "callgraph" and len(doc["edges"]) == 3  # scope-profiler's document
    assert {r["name"] for r in doc["regions"]} == set(REGIONS)
    out3 = tmp_path / "c.png"
    assert plots.main(["durations", str(run1), "-o", str(out3), "--combine", "a=outer",
                       "b=inner"]) == 0
    check_png(out3)
    # through the console script's plot subcommand too
    from spanscope import _cli
    out4 = tmp_path / "g.html"
    assert _cli.main(["plot", "gantt", str(run1), "-o", str(out4),
                      "--backend", "plotly"]) == 0
    assert "Plotly.newPlot" in out4.read_text()


def test_cli_new_option_errors(run1, tmp_path):
    out = tmp_path / "o.png"
    cases = [
        (("durations", run1, "-o", out, "--combine-regions", "oops"), 2,
         "--combine-regions expects 'NAME=PATTERN1,PATTERN2' (got 'oops')"),
        (("durations", run1, "-o", out, "--combine-regions", "a=x", "a=y"), 2,
         "group 'a' given more than once"),
        (("durations", run1, "-o", out, "--combine-regions", "a=zzz"), 1,
         "matched no regions"),
        (("gantt", run1, "-o", out, "--stack-children"), 2,
         "--stack-children does not apply to the gantt plot"),
        (("gantt", run1, "-o", out, "--fluid-callgraph"), 2,
         "--fluid-callgraph does not apply"),
        (("durations", run1, "-o", out, "--stack-children", "--metric", "min"), 1,
         "stack_children does not apply to metric(s) ['min']"),
        (("gantt", run1, "-o", out, "--data-format", "parquet"), 2,
         "--data-format needs --data"),
        (("gantt", run1, "-o", tmp_path / "o.html"), 2, "image format"),
        (("gantt", run1, "-o", out, "--backend", "bokeh"), 2, "invalid choice"),
    ]
    for args, code, msg in cases:
        r = cli(*args)
        assert r.returncode == code, (args, r.stderr)
        assert msg in r.stderr, (args, r.stderr)
    assert not out.exists()
    r = cli("--help")
    for opt in ("--backend", "--combine-regions", "--stack-children", "--fluid-callgraph",
                "--data-format", "spanscope[plotly]", "spanscope[parquet]"):
        assert opt in r.stdout, opt


def test_same_file_twice_gets_two_labels(run1, tmp_path):
    data = tmp_path / "d.csv"
    plots.plot_durations([run1, run1], data_filepath=data, verbose=False)
    assert {r["run"] for r in read_csv(data)} == {"run1 (1)", "run1 (2)"}


def test_cli_every_kind_plotly(run1, ranks3, tmp_path):
    """Every kind with --backend plotly: an .html page with a plot in it."""
    need_plotly()
    for kind in plots.KINDS:
        files = ([run1, ranks3] if kind in ("speedup", "efficiency", "weak-scaling",
                                            "weak-efficiency") else [ranks3])
        out = tmp_path / f"{kind}.html"
        assert plots.main([kind, *map(str, files), "-o", str(out), "--backend", "plotly"]) == 0
        page = _HtmlScripts()
        page.feed(out.read_text(encoding="utf-8"))
        (call,) = [s for s in page.scripts if "Plotly.newPlot" in s]
        assert '"type":' in call, kind  # at least one trace drawn
        out.unlink()


@pytest.mark.parametrize("sort_by,top_n", [(None, None), ("total", None), ("max", 2),
                                           ("name", None), (None, 2), ("avg", 3)])
def test_durations_order_is_scope_profilers(tmp_path, run1, sort_by, top_n):
    """plot_durations orders its bars as scope-profiler's
    _sort_and_limit_region_names does on the same runs: the metric's
    maximum over every run (a slower second run decides), "name", top_n
    alone alphabetical, the natural order with neither."""
    sp_dur = pytest.importorskip("scope_profiler.plotting_scripts.durations")
    import csv
    import scope_profiler
    slow = record(tmp_path / "slow.h5", threads=2, slow=3.0)
    files = [run1, slow]
    data = tmp_path / "d.csv"
    plots.plot_durations([str(f) for f in files], sort_by=sort_by, top_n=top_n,
                         filepath=str(tmp_path / "d.png"), data_filepath=str(data))
    with open(data) as f:
        got = list(dict.fromkeys(row["region"] for row in csv.DictReader(f)))
    theirs = [scope_profiler.read_h5(str(f)) for f in files]
    natural = list(dict.fromkeys(n for n in plots._runs._select(plots._runs._as_runs([str(files[0])])[0],
                                                          None, None)))
    for n in plots._runs._select(plots._runs._as_runs([str(files[1])])[0], None, None):
        if n not in natural:
            natural.append(n)
    want = sp_dur._sort_and_limit_region_names(natural, theirs, None, sort_by, top_n)
    assert got == want


def test_durations_unknown_sort_by_names_the_choices(run1, tmp_path):
    with pytest.raises(ValueError, match="Valid options are"):
        plots.plot_durations(str(run1), sort_by="bogus", filepath=str(tmp_path / "x.png"))
